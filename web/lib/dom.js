// Small DOM helpers shared by the panels.

/** The element matching `selector` inside `root`; a missing one is a bug in index.html. */
export function find(root, selector) {
  const node = root.querySelector(selector);
  if (node === null) throw new Error(`index.html: no ${selector} in #${root.id}`);
  return node;
}

/**
 * Shows `text` in the panel's inline message (a live region) and marks the
 * fields at fault; an empty text clears both. The results on the page are
 * left as they were, so the last good result stays visible.
 */
export function report(message, text, fields = []) {
  message.textContent = text;
  message.hidden = text === '';
  for (const field of message.closest('section').querySelectorAll('[aria-invalid]')) {
    field.removeAttribute('aria-invalid');
  }
  for (const field of fields) field.setAttribute('aria-invalid', 'true');
}

/** A `tag` element (a table cell, say) holding `text`, with an optional class. */
export function cell(tag, text, className = '') {
  const node = document.createElement(tag);
  node.textContent = text;
  if (className) node.className = className;
  return node;
}

/** A table row: a header cell, then one cell per item, each filled by `fill(td, item, i)`. */
export function tableRow(header, items, fill) {
  const tr = document.createElement('tr');
  const th = document.createElement('th');
  th.scope = 'row';
  th.innerHTML = header;
  tr.append(th);
  items.forEach((item, i) => {
    const td = document.createElement('td');
    fill(td, item, i);
    tr.append(td);
  });
  return tr;
}

/** Lets the browser paint (a progress bar, say) before the next piece of work. */
export function nextFrame() {
  return new Promise((resolve) => setTimeout(resolve, 0));
}
