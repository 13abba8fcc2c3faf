// An edit on the page timed as every timing test times it: from the change to the inspector's
// effect (its `inspector-updated` performance mark) and to the next painted frame.

/**
 * Defines, in `page` (a playwright-core Page) as it is now, `window.settle()` (resolves after
 * the next frame) and `window.timeEdit(edit)` (runs `edit`, resolves to `{ update, frame }`
 * in ms). Call it again after a navigation.
 */
export async function installEditTimer(page) {
  await page.evaluate(() => {
    window.settle = () => new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
    window.timeEdit = async (edit) => {
      performance.clearMarks('inspector-updated');
      const t0 = performance.now();
      edit();
      await window.settle();
      const mark = performance.getEntriesByName('inspector-updated').pop();
      return { update: mark ? mark.startTime - t0 : NaN, frame: performance.now() - t0 };
    };
  });
}

/** The median of `xs` (the upper one of an even count). */
export const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/**
 * For each kind of edit in `samples` (`{ kind: [{ update, frame }] }`), the report's two
 * medians: `<prefix><kind>: median edit → inspector ms` and `… → next frame ms`.
 */
export function medians(samples, prefix = '') {
  const report = {};
  for (const [kind, xs] of Object.entries(samples)) {
    report[`${prefix}${kind}: median edit → inspector ms`] = median(xs.map((s) => s.update));
    report[`${prefix}${kind}: median edit → next frame ms`] = median(xs.map((s) => s.frame));
  }
  return report;
}
