import { forHtml, forHtmlBlock } from '../../util/safe-text.js';

/**
 * HTML this module wrote: the only kind of value `h` puts into a page as it is. Anything else a
 * template is handed (a site name, a message, a number) goes through safe-text's HTML rule, so a page
 * cannot forget to escape a string: there is no other way to put one in.
 */
export class Markup {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

/** What a template may hold: escaped unless it is Markup; lists are joined; absent values are nothing. */
export type Part = Markup | string | number | readonly Part[] | null | undefined | false;

function partText(part: Part): string {
  if (part instanceof Markup) return part.text;
  if (Array.isArray(part)) return (part as readonly Part[]).map(partText).join('');
  if (part === null || part === undefined || part === false) return '';
  return forHtml(String(part));
}

/**
 * A tagged template (`h`, not `html`: prettier would reformat an `html` one, whitespace and all):
 * the literal parts are the page's own markup, every value is escaped (see Markup).
 */
export function h(strings: TemplateStringsArray, ...values: Part[]): Markup {
  let text = strings[0]!;
  for (let i = 0; i < values.length; i++) text += partText(values[i]) + strings[i + 1]!;
  return new Markup(text);
}

/** A block of text whose line breaks and tabs stand (a command's output, in a `<pre>`), escaped otherwise. */
export function block(text: string): Markup {
  return new Markup(forHtmlBlock(text));
}
