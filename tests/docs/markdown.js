// The fenced code blocks of a markdown file, each with the doctest directive
// written in an HTML comment on the lines just before it (blank lines
// between are allowed):
//
//   <!-- doctest: not run: REASON -->   parsed or compiled, not run (a CDN URL, the registry)
//   <!-- doctest: checked: TEST ... --> checked by a test of its own (TEST, a file in tests/)
//   <!-- doctest: file NAME -->         saved as NAME in the document's work directory
//   <!-- doctest: run -->               a shell block whose commands run here
//   <!-- doctest: output -->            what the block run before it printed
//   <!-- doctest: given                 code run before a JS block (what its names stand for)
//   ...
//   -->
//
// A block without a directive is checked by its language's default
// (tests/docs.test.js).

const FENCE = /^(`{3,}|~{3,})\s*([\w+-]*)[^\n]*$/;
const DIRECTIVE = /<!--\s*doctest:\s*([\s\S]*?)-->\s*$/;

/** [{ lang, code, line, directive: { kind, arg } | null }] in document order. */
export function fencedBlocks(text) {
  const lines = text.split('\n');
  const blocks = [];
  for (let i = 0; i < lines.length; i++) {
    const open = FENCE.exec(lines[i]);
    if (!open) continue;
    const close = lines.findIndex((l, j) => j > i && l.startsWith(open[1]) && l.trim() === open[1]);
    if (close < 0) throw new Error(`line ${i + 1}: unclosed fence`);
    blocks.push({ lang: open[2] || 'text', code: lines.slice(i + 1, close).join('\n'), line: i + 1, directive: directiveBefore(lines, i) });
    i = close;
  }
  return blocks;
}

function directiveBefore(lines, fenceIndex) {
  let end = fenceIndex - 1;
  while (end >= 0 && lines[end].trim() === '') end--;
  if (end < 0 || !lines[end].trimEnd().endsWith('-->')) return null;
  let start = end;
  while (start >= 0 && !lines[start].includes('<!--')) start--;
  const match = DIRECTIVE.exec(lines.slice(start, end + 1).join('\n'));
  if (!match) return null;
  const body = match[1].trim();
  const [kind] = body.split(/[\s:]/, 1);
  const arg = body.slice(kind.length).replace(/^:/, '').trim();
  if (!['not', 'checked', 'file', 'run', 'output', 'given'].includes(kind)) {
    throw new Error(`line ${start + 1}: unknown doctest directive "${kind}"`);
  }
  if (kind === 'not') {
    const reason = /^run:\s*(.+)$/s.exec(arg);
    if (!reason) throw new Error(`line ${start + 1}: write "doctest: not run: REASON"`);
    return { kind: 'not run', arg: reason[1].trim() };
  }
  return { kind, arg };
}
