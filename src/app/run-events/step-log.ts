import type { Logger } from 'pino';
import { isProblem } from '../../run/types.js';
import type { Subscriber } from './subscriber.js';

/**
 * A log line per answer: problems at info (a log file's default level), every other step at debug:
 * the journal and the report hold every outcome, and a line per step costs more than it tells.
 */
export function stepLog(logger: Logger): Subscriber {
  return {
    onEvent(event) {
      if (event.type !== 'result' && event.type !== 'update') return;
      const { step, result } = event;
      const problem = isProblem(result.status);
      logger[problem ? 'info' : 'debug'](
        {
          step: step.id,
          task: step.task,
          env_id: step.target.env_id,
          status: result.status,
          http_status: result.http_status,
          operation_id: result.operation_id,
          attempts: result.attempts,
          reason: result.reason,
        },
        event.type === 'result' ? 'step answered' : 'step updated',
      );
    },
  };
}
