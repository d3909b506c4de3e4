import { nameOf } from '../inventory/kinds.js';
import { restoreLine } from '../report/report.js';
import { clip, forSlack, MESSAGE_WIDTH, NAME_WIDTH } from '../util/safe-text.js';
import { continueCommand } from '../report/ci-formats.js';
import { countsText, exitMeaning, type RunEnd } from './run-end.js';
import { problemSites, siteText } from '../report/site-problems.js';
import { targetLabel, type Report } from '../report/report.js';
import { releaseAgeGroups } from '../report/release-age-lines.js';
import { holdsLive, stagingGroups } from '../report/staging-lines.js';
import { isolatedResults, isolationLine } from '../report/isolation-lines.js';
import { withheldGroups, withheldText } from '../report/withheld-lines.js';
import { changedLines, moreChangedLine } from '../report/changed.js';
import { quarantinedText, quarantinedVersions } from '../report/quarantined.js';

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
  const changed = report ? changedLines(report, SLACK_LISTED) : undefined;
  if (changed && changed.lines.length > 0)
    blocks.push(
      section(
        [
          ...changed.lines.map((line) => `• updated: ${forSlack(clip(line, MESSAGE_WIDTH))}`),
          ...(changed.more > 0 ? [moreChangedLine(changed.more)] : []),
        ].join('\n'),
      ),
    );
  // Each failed site once, as the terminal says it: three writes one restore took back are one site that broke.
  const sites = report ? problemSites(report) : [];
  if (sites.length > 0) {
    const lines = sites.slice(0, SLACK_LISTED).map((site) => {
      const r = site.lead;
      return (
        `• ${r.status} ${forSlack(clip(targetLabel(r), NAME_WIDTH))} (${forSlack(clip(r.task, NAME_WIDTH))}): ${forSlack(siteText(site, MESSAGE_WIDTH))}` +
        `${r.restore_point ? `; ${forSlack(restoreLine({ ...r, restore_point: r.restore_point }))}` : ''}`
      );
    });
    if (sites.length > SLACK_LISTED) lines.push(`… and ${sites.length - SLACK_LISTED} more sites in the report`);
    blocks.push(section(lines.join('\n')));
  }
  const isolated = report ? isolatedResults(report.results) : [];
  if (isolated.length > 0) {
    const next = end.report ? continueCommand(report!, end.report.path) : undefined;
    const lines = isolated
      .slice(0, SLACK_LISTED)
      .map(
        (r) =>
          `• isolated ${forSlack(clip(targetLabel(r), NAME_WIDTH))} (${forSlack(clip(r.task, NAME_WIDTH))}): ${forSlack(clip(isolationLine(r, next) ?? '', 2 * MESSAGE_WIDTH))}`,
      );
    if (isolated.length > SLACK_LISTED) lines.push(`… and ${isolated.length - SLACK_LISTED} more isolated in the report`);
    blocks.push(section(lines.join('\n')));
  }
  const quarantined = report ? quarantinedLines(report) : [];
  if (quarantined.length > 0) blocks.push(section(quarantined.join('\n')));
  const held = report ? heldLines(report) : [];
  if (held.length > 0) blocks.push(section(held.join('\n')));
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

/** The versions this run found to break a site, once each, with what sends one again: the company's later runs leave them alone. */
function quarantinedLines(report: Report): string[] {
  const versions = quarantinedVersions(report.quarantined);
  const lines = versions
    .slice(0, SLACK_LISTED)
    .map((q) => `• quarantined: ${forSlack(clip(quarantinedText(q), MESSAGE_WIDTH))}; to send it again: \`${forSlack(q.override)}\``);
  if (versions.length > SLACK_LISTED) lines.push(`… and ${versions.length - SLACK_LISTED} more quarantined in the report`);
  return lines;
}

/**
 * Updates held back (not problems): each release-age hold and each staging-first wait once per item
 * version, with its code, how many it stands for, and the date it may go.
 */
function heldLines(report: Report): string[] {
  const ages = releaseAgeGroups(report.results)
    .filter((g) => g.decision.held)
    .map(({ decision: d, environments }) => ({
      code: d.code,
      text: `${nameOf(d)} ${d.installed} → ${d.version} on ${environments} environments, eligible ${d.eligible_at}`,
    }));
  const staging = stagingGroups(report.results)
    .filter((g) => holdsLive(g.decision))
    .map(({ decision: d, sites }) => ({ code: d.code, text: `${nameOf(d)} ${d.version} on ${sites} sites${d.until ? `, live after ${d.until}` : ''}` }));
  const withheld = withheldGroups(report.results).map((g) => ({ code: g.decision.code, text: withheldText(g) }));
  const lines = [...withheld, ...ages, ...staging];
  // The code is sitefleet's own word, in a code span (its underscores stay); the rest names the service's themes and plugins.
  const shown = lines.slice(0, SLACK_LISTED).map(({ code, text }) => `• held: \`${code}\` ${forSlack(clip(text, MESSAGE_WIDTH))}`);
  if (lines.length > SLACK_LISTED) shown.push(`… and ${lines.length - SLACK_LISTED} more held in the report`);
  return shown;
}

function section(text: string): unknown {
  return { type: 'section', text: { type: 'mrkdwn', text } };
}
