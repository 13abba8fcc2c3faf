// Jest `setupFiles` for the jsdom environment, as the README gives it: jsdom's window has no
// TextEncoder/TextDecoder, which the package (and wasm-bindgen's glue) use.
import { TextDecoder, TextEncoder } from 'node:util';

Object.assign(globalThis, { TextDecoder, TextEncoder });
