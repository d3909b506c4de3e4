import { ENDPOINTS, fillPath, type Endpoint } from '../api/endpoints.js';
import type { InputProblem } from '../errors.js';
import type { Plan } from './plan.js';

/**
 * A plan read back (a saved plan, a journal's start record) past its schema: every step names an
 * endpoint of the table, and its method and path are the ones the table builds from its parameters
 * (the client builds the path that way; a path written otherwise would show one call and send
 * another). Step ids are unique and name a task of the plan. Paths are `steps.N.field`.
 */
export function planReadBackProblems(plan: Plan): InputProblem[] {
  const problems: InputProblem[] = [];
  const ids = new Set<string>();
  const tasks = new Set(plan.tasks.map((t) => t.index));
  for (const [i, step] of plan.steps.entries()) {
    const at = (field: string, message: string) => problems.push({ path: `steps.${i}.${field}`, message });
    if (ids.has(step.id)) at('id', `${JSON.stringify(step.id)} names another step too`);
    ids.add(step.id);
    if (!tasks.has(step.task_index)) at('task_index', `names no task of the plan`);
    const endpoint: Endpoint | undefined = Object.hasOwn(ENDPOINTS, step.endpoint) ? ENDPOINTS[step.endpoint] : undefined;
    if (!endpoint) {
      at('endpoint', `${JSON.stringify(step.endpoint)} is not an endpoint of the API`);
      continue;
    }
    if (step.method !== endpoint.method) at('method', `${step.endpoint} is ${endpoint.method}, not ${step.method}`);
    let path: string | undefined;
    try {
      path = fillPath(endpoint.path, step.params);
    } catch (error) {
      at('params', (error as Error).message);
    }
    if (path !== undefined && path !== step.path) at('path', `is not the path ${step.endpoint} builds from the step's params`);
  }
  return problems;
}
