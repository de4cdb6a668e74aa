// Every property name the package's source reads or writes (`.name` and
// `name:`), for tests/helpers/prototype-attack.js: a name added to the
// package later is attacked with the rest. Node only.
import { readdirSync, readFileSync } from 'node:fs';

const SRC = new URL('../../src/', import.meta.url);

export function packageNames() {
  const names = new Set();
  for (const file of readdirSync(SRC, { recursive: true })) {
    if (!file.endsWith('.js')) continue;
    const text = readFileSync(new URL(file, SRC), 'utf8');
    for (const [, name] of text.matchAll(/\.([A-Za-z_$][\w$]*)/g)) names.add(name);
    for (const [, name] of text.matchAll(/^\s*([A-Za-z_$][\w$]*):/gm)) names.add(name);
  }
  return [...names].sort();
}
