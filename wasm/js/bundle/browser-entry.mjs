// A browser program bundled by esbuild (`--platform=browser`), which leaves the package's
// `new URL(…, import.meta.url)` as written and copies no `.wasm`: as the README says, the
// `.wasm` is copied next to the bundle and `init` is given its URL.
import init, { parseMessage } from 'agent-chatter-wasm';

await init({ module_or_path: new URL('./agent_chatter_wasm_bg.wasm', import.meta.url) });
console.log(parseMessage('Hello [NEXT: max !P1]').parsedAddressees[0].intent);
