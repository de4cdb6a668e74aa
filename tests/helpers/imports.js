// The relative module specifiers a JS or .d.ts file names, read from its
// text: what tests/package.test.js resolves inside the tarball and
// tests/contributing.test.js draws the folder graph of src/ from.
import { dirname, join, normalize, sep } from 'node:path';

const PATTERNS = [
  /\b(?:import|export)\s[^'"`;]*?\bfrom\s*['"](\.{1,2}\/[^'"]+)['"]/g, // import … from, export … from
  /\bimport\s*\(\s*['"](\.{1,2}\/[^'"]+)['"]\s*\)/g, // import('…'), a dynamic import or a type import
  /\bimport\s*['"](\.{1,2}\/[^'"]+)['"]/g, // import '…', for its effects
];

/** The relative specifiers of `code`, in no particular order. */
export function relativeImports(code) {
  const found = [];
  for (const pattern of PATTERNS) for (const m of code.matchAll(pattern)) found.push(m[1]);
  return found;
}

/** The path (relative to the same root as `file`, with /) an import of `specifier` from `file` names. */
export const importedPath = (file, specifier) => normalize(join(dirname(file), specifier)).split(sep).join('/');
