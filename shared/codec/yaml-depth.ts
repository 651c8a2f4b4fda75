// A guard before YAML parsing: the yaml package recurses once per level of
// flow collections ("[[[[...") and runs out of stack about a thousand levels
// down, where V8 may abort the whole process (a regular expression compiled
// on an exhausted stack is a fatal error). Go's YAML decoder stops at 10000
// levels; no Kubernetes object comes near either limit, so tkube stops at 500.

export const MAX_YAML_DEPTH = 500;

/** The deepest nesting of flow collections ([ and {) outside quoted scalars and comments. */
export function flowDepth(text: string, stopAt = MAX_YAML_DEPTH + 1): number {
  let depth = 0;
  let max = 0;
  let quote = '';
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quote) {
      if (c === '\\' && quote === '"') i++;
      else if (c === quote) quote = '';
      continue;
    }
    if (c === '"' || c === "'") quote = c;
    else if (c === '#' && (i === 0 || /\s/.test(text[i - 1]))) {
      while (i < text.length && text[i] !== '\n') i++;
    } else if (c === '[' || c === '{') {
      if (++depth > max) max = depth;
      if (max >= stopAt) return max;
    } else if ((c === ']' || c === '}') && depth > 0) depth--;
  }
  return max;
}

/**
 * An upper bound of block nesting: the widest run of indentation and block
 * indicators ("- - - - x", "? ? ? x") opening a line, each of which may open a level.
 */
export function blockDepth(text: string, stopAt = 2 * MAX_YAML_DEPTH + 1): number {
  let max = 0;
  let run = 0;
  let atLineStart = true;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 10) {
      run = 0;
      atLineStart = true;
    } else if (atLineStart && (c === 32 || c === 9 || c === 45 || c === 63)) {
      if (++run > max && (max = run) >= stopAt) return max;
    } else atLineStart = false;
  }
  return max;
}

/** Throws Go's error when the document nests deeper than tkube allows. */
export function checkYAMLDepth(text: string): void {
  if (flowDepth(text) > MAX_YAML_DEPTH || blockDepth(text) > 2 * MAX_YAML_DEPTH)
    throw new Error(`yaml: exceeded max depth of ${MAX_YAML_DEPTH}`);
}
