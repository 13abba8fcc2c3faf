// The part of `node:assert/strict` the suites use, for the browser: strict equality, strict
// deep equality (prototypes, own enumerable keys, Dates by time), notEqual, ok, throws, doesNotThrow.
class AssertionError extends Error {
  constructor(message) {
    super(message);
    this.name = 'AssertionError';
  }
}

const show = (v) => {
  try {
    return typeof v === 'string' ? JSON.stringify(v) : JSON.stringify(v) ?? String(v);
  } catch {
    return String(v);
  }
};

function fail(message, fallback) {
  throw message instanceof Error ? message : new AssertionError(message ?? fallback);
}

export function isDeepStrictEqual(a, b) {
  if (Object.is(a, b)) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Object.getPrototypeOf(a) !== Object.getPrototypeOf(b)) return false;
  if (a instanceof Date) return Object.is(a.getTime(), b.getTime());
  if (a instanceof RegExp) return String(a) === String(b);
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  for (const k of ka) {
    if (!Object.prototype.hasOwnProperty.call(b, k) || !isDeepStrictEqual(a[k], b[k])) return false;
  }
  return true;
}

function equal(actual, expected, message) {
  if (!Object.is(actual, expected)) fail(message, `expected ${show(expected)}, got ${show(actual)}`);
}

function notEqual(actual, expected, message) {
  if (Object.is(actual, expected)) fail(message, `expected anything but ${show(expected)}`);
}

function deepEqual(actual, expected, message) {
  if (!isDeepStrictEqual(actual, expected)) fail(message, `expected ${show(expected)}, got ${show(actual)}`);
}

function ok(value, message) {
  if (!value) fail(message, `expected a truthy value, got ${show(value)}`);
}

function match(string, regexp, message) {
  if (typeof string !== 'string' || !regexp.test(string)) fail(message, `expected ${show(string)} to match ${regexp}`);
}

function matches(error, expected) {
  if (expected === undefined) return true;
  if (expected instanceof RegExp) return expected.test(String(error));
  if (typeof expected === 'function') {
    if (expected.prototype !== undefined && error instanceof expected) return true;
    return expected(error) === true;
  }
  // As node's: a RegExp value is tested against the string property.
  return Object.entries(expected).every(([k, v]) =>
    v instanceof RegExp && typeof error?.[k] === 'string' ? v.test(error[k]) : isDeepStrictEqual(error?.[k], v));
}

function throws(fn, expected, message) {
  if (typeof expected === 'string') [expected, message] = [undefined, expected];
  try {
    fn();
  } catch (error) {
    if (!matches(error, expected)) fail(message, `unexpected error: ${String(error)}`);
    return;
  }
  fail(message, 'Missing expected exception');
}

function doesNotThrow(fn, message) {
  try {
    fn();
  } catch (error) {
    fail(message, `unexpected error: ${String(error)}`);
  }
}

const assert = Object.assign((value, message) => ok(value, message), { equal, notEqual, deepEqual, ok, match, throws, doesNotThrow, AssertionError });
export default assert;
export { equal, notEqual, deepEqual, ok, match, throws, doesNotThrow, AssertionError };
