// Every program of the WebGPU backend, and the forms they give: the device
// layer (../kernels.js), the device form's arguments (../args.js) and the
// array form (../arrays.js) are each made from this list, with no code of
// their own for any one function. A new program is a file beside this one
// and a line here.
import { freeze, List } from '../../loader/intrinsics.js';
import { LAYERNORM_PROGRAM } from './layernorm.js';
import { RMSNORM_PROGRAM } from './rmsnorm.js';

const PROGRAMS = new List(2);
PROGRAMS[0] = RMSNORM_PROGRAM;
PROGRAMS[1] = LAYERNORM_PROGRAM;

/** Each form by its public name: its description (src/ops/descriptions.js) and its program. */
export const FORMS = (() => {
  const forms = { __proto__: null };
  for (let p = 0; p < PROGRAMS.length; p++) {
    const program = PROGRAMS[p];
    for (let f = 0; f < program.forms.length; f++) forms[program.forms[f].name] = freeze({ __proto__: null, op: program.forms[f], program });
  }
  return freeze(forms);
})();

/** The forms' names, in the programs' order. */
export const FORM_NAMES = freeze(keysOf(FORMS));

function keysOf(record) {
  const names = new List();
  for (const name in record) names[names.length] = name;
  return names;
}
