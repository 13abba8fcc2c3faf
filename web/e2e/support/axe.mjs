// axe-core (the root package.json's pinned devDependency) run inside a page: the accessibility
// check of docs/architecture.md §13. A test fails on any serious or critical violation, listing
// each one (rule, impact, the elements' selectors, what is wrong); moderate and minor ones are
// reported as the test's diagnostics.
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';

const script = fileURLToPath(new URL('../../../node_modules/axe-core/axe.min.js', import.meta.url));

/** axe's violations on `page` (a playwright-core Page) as it is now. */
export async function axeViolations(page) {
  if (!(await page.evaluate(() => typeof window.axe === 'object'))) {
    await page.addScriptTag({ path: script });
  }
  return page.evaluate(async () => {
    const results = await window.axe.run(document, { resultTypes: ['violations'] });
    return results.violations.map((v) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      nodes: v.nodes.map((n) => ({ target: n.target.join(' '), summary: n.failureSummary })),
    }));
  });
}

/** One line per element: `where: rule (impact) at selector: what is wrong`. */
export function describe(violations, where) {
  return violations.flatMap((v) => v.nodes.map((n) =>
    `${where}: ${v.id} (${v.impact}: ${v.help}) at ${n.target}: ${n.summary.replace(/\s+/g, ' ')}`));
}

/**
 * The accessibility findings on `page` as it is now, described per element: the serious and
 * critical ones (`severe`, which a test fails on) and the moderate and minor ones (`minor`,
 * which it reports).
 */
export async function axeFindings(page, where) {
  const violations = await axeViolations(page);
  const isSevere = (v) => v.impact === 'serious' || v.impact === 'critical';
  return {
    severe: describe(violations.filter(isSevere), where),
    minor: describe(violations.filter((v) => !isSevere(v)), where),
  };
}

/** Fails listing every serious or critical finding collected (see `axeFindings`). */
export function assertNoSevere(severe) {
  assert.deepEqual(severe, [], `axe found ${severe.length} serious or critical violations`);
}

/** The three sizes every new state is checked at: two laptops and a phone. */
export const SIZES = [
  ['1440x900', { width: 1440, height: 900 }],
  ['1280x720', { width: 1280, height: 720 }],
  ['390x844', { width: 390, height: 844 }],
];

/**
 * `axeFindings` on `page` as it is now at each of `sizes` (`[name, viewport]` pairs, the
 * three `SIZES` unless told), each finding prefixed with its size's name; the page is put
 * back to the size it had, so the steps after it see the page they saw before.
 */
export async function axeAtSizes(page, label, sizes = SIZES) {
  const before = page.viewportSize();
  const [severe, minor] = [[], []];
  for (const [name, viewport] of sizes) {
    await page.setViewportSize(viewport);
    const found = await axeFindings(page, `${name}, ${label}`);
    severe.push(...found.severe);
    minor.push(...found.minor);
  }
  if (before) await page.setViewportSize(before);
  return { severe, minor };
}
