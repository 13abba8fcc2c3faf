// `node:test`'s `test(name, fn)` for the browser: tests are collected, run.mjs runs them.
export const registered = [];

export function test(name, fn) {
  registered.push({ name, fn });
}
