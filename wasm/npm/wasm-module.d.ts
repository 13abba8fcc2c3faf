// The package's `.wasm`, as runtimes that import wasm as a module give it (Cloudflare's workerd
// and wrangler): pass it to `initSync({ module })` of `agent-chatter-wasm/web`.
/** `WebAssembly.Module` when the project's libs declare it, else `never`. */
type CompiledWasm = typeof globalThis extends { WebAssembly: { Module: { prototype: infer T } } } ? T : never;
declare const wasmModule: CompiledWasm;
export default wasmModule;
