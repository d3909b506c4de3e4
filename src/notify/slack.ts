import { restoreLine } from '../report/report.js';
import { clip, forSlack, MESSAGE_WIDTH, NAME_WIDTH } from '../util/safe-text.js';
import { continueCommand } from '../report/ci-formats.js';
import { countsText, exitMeaning, problemsOf, type RunEnd } from './run-end.js';
import { targetLabel } from '../report/report.js';

/** Slack lists this many problem steps; more make a message people scroll past. */
const SLACK_LISTED = 10;

/**
 * Slack's incoming-webhook message (`text`, the notification's line, and `blocks`), which
 * Slack-compatible chats (Mattermost, Rocket.Chat, Discord's /slack endpoint) accept too. Every name
 * the service gave goes through `forSlack`; the time it was sent is in its last line.
 */
export function slackMessage(end: RunEnd, sentAt: Date): { text: string; blocks: unknown[] } {
  const report = end.report?.value;
  const mark = end.exitCode === 0 ? '✅' : '❌';
  const text = `${mark} sitefleet ${forSlack(end.name)}: exit ${end.exitCode} (${exitMeaning(end.exitCode)})${report ? `: ${countsText(report.summary)}` : ''}`;
  const blocks: unknown[] = [section(`*${text}*${end.error ? `\n${forSlack(clip(end.error, MESSAGE_WIDTH))}` : ''}`)];
  const problems = report ? problemsOf(report) : [];
  if (problems.length > 0) {
    const lines = problems
      .slice(0, SLACK_LISTED)
      .map(
        (r) =>
          `• ${r.status} ${forSlack(clip(targetLabel(r), NAME_WIDTH))} (${forSlack(clip(r.task, NAME_WIDTH))}): ${forSlack(clip(r.reason ?? r.error ?? '', MESSAGE_WIDTH))}` +
          `${r.restore_point ? `; ${forSlack(restoreLine({ ...r, restore_point: r.restore_point }))}` : ''}`,
      );
    if (problems.length > SLACK_LISTED) lines.push(`… and ${problems.length - SLACK_LISTED} more in the report`);
    blocks.push(section(lines.join('\n')));
  }
  const next = report && end.report ? continueCommand(report, end.report.path) : undefined;
  if (next) blocks.push(section(`continue with: \`${forSlack(next)}\``));
  const context = [
    end.runId ? `run ${end.runId}` : undefined,
    end.report ? `report ${forSlack(end.report.path)}` : undefined,
    `started ${end.startedAt.toISOString()}`,
    `sent ${sentAt.toISOString()}`,
  ].filter(Boolean);
  blocks.push({ type: 'context', elements: [{ type: 'mrkdwn', text: context.join(' · ') }] });
  return { text, blocks };
}

function section(text: string): unknown {
  return { type: 'section', text: { type: 'mrkdwn', text } };
}
