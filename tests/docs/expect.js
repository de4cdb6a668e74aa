// What a JS block's `// → VALUE` comment claims, checked against what the
// statement gave. VALUE is one of:
//   Float32Array [0.5477, -0.3651, ...]  the array's type, and each element to
//                                        the digits shown (a trailing ... : a prefix)
//   RangeError: rmsNorm: ...             the statement throws that class, with that message
//   any JS literal ({ backend: 'simd' }) deep-equal to the value
import assert from 'node:assert/strict';

const ARRAY = /^(\w+Array)(?:\(\d+\))?\s*\[(.*)\]$/s;
const ERROR = /^(TypeError|RangeError|Error):\s*(.*)$/s;

function checkNumber(actual, shown, where) {
  const value = Number(shown);
  assert.ok(!Number.isNaN(value) || shown === 'NaN', `${where}: cannot read ${shown}`);
  if (shown === 'NaN') return assert.ok(Number.isNaN(actual), `${where}: ${actual}, shown NaN`);
  const decimals = (/\.(\d+)/.exec(shown)?.[1] ?? '').length;
  if (decimals === 0 && !/e/i.test(shown)) return assert.equal(actual, value, where);
  const tolerance = /e/i.test(shown) ? Math.abs(value) * 10 ** -(decimals + 1) * 5 : 0.5 * 10 ** -decimals;
  assert.ok(Math.abs(actual - value) <= tolerance * (1 + 1e-9), `${where}: ${actual} is not ${shown} to the digits shown`);
}

/** Throws unless `actual` is what `shown` says. */
export function expectShown(actual, shown, where) {
  const array = ARRAY.exec(shown);
  if (array) {
    assert.equal(actual?.constructor?.name, array[1], `${where}: the type`);
    const items = array[2].split(',').map((s) => s.trim()).filter((s) => s !== '');
    const prefix = items.length > 0 && ['...', '…'].includes(items.at(-1));
    if (prefix) items.pop();
    else assert.equal(actual.length, items.length, `${where}: the length`);
    items.forEach((item, i) => checkNumber(actual[i], item, `${where}: element ${i}`));
    return;
  }
  assert.ok(!ERROR.test(shown), `${where}: the statement was to throw ${shown}`);
  const expected = new Function(`return (${shown});`)();
  assert.deepStrictEqual(actual, expected, where);
}

/** Throws unless `run()` throws the error `shown` names. */
export function expectThrown(run, shown, where) {
  const [, name, message] = ERROR.exec(shown) ?? [];
  assert.ok(name, `${where}: ${shown} names no error`);
  assert.throws(run, (error) => {
    assert.equal(error.constructor.name, name, `${where}: the error's class`);
    assert.equal(error.message, message.trim(), `${where}: the message`);
    return true;
  }, where);
}

const ARROW = /^(.*?);?\s*\/\/\s*→\s*(.+)$/;

/**
 * The block's source with each `// → VALUE` line checked: the line must be
 * one whole statement, `const|let NAME = EXPR;` or `EXPR;`. Returns the
 * source and how many checks it holds.
 */
export function withChecks(code, where) {
  let checks = 0;
  const lines = code.split('\n').map((line, i) => {
    const match = ARROW.exec(line);
    if (!match) return line;
    checks++;
    const [, statement, shown] = match;
    const at = JSON.stringify(`${where}, line ${i + 1} of the block`);
    const value = JSON.stringify(shown.trim());
    const declaration = /^(\s*(?:const|let|var)\s+(\w+)\s*=\s*)(.+)$/.exec(statement);
    if (declaration) {
      const [, , name] = declaration;
      if (ERROR.test(shown.trim())) throw new Error(`${where}: a declaration cannot show a thrown error: ${line}`);
      return `${statement}; __expectShown(${name}, ${value}, ${at});`;
    }
    if (/^\s*(?:const|let|var|if|for|while|return)\b/.test(statement) || statement.trim() === '') {
      throw new Error(`${where}: "// →" must follow one whole statement on its line: ${line}`);
    }
    const indent = /^\s*/.exec(statement)[0];
    if (ERROR.test(shown.trim())) return `${indent}__expectThrown(() => (${statement.trim()}), ${value}, ${at});`;
    return `${indent}__expectShown((${statement.trim()}), ${value}, ${at});`;
  });
  return { source: lines.join('\n'), checks };
}
