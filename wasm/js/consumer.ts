// Type-checked (never run) with `tsc -p wasm/js/tsconfig.json --noEmit`: the package's
// declarations accept correct calls and reject wrong shapes (each @ts-expect-error must fire).
import {
  parseMessage,
  stripAll,
  stripRouting,
  version,
  type Intent,
  type ParseResult,
} from '../../pkg/node/agent_chatter_wasm.js';

const v: string = version();
const parsed: ParseResult = parseMessage(`[NEXT: max !P1] ${v}`);
const first: Intent | undefined = parsed.parsedAddressees[0]?.intent;
const from: string | null = parsed.fromMember;
const clean: string = stripAll(parsed.cleanContent) + stripRouting('x');
const done: boolean = parsed.isDone;
void [first, from, clean, done];

// @ts-expect-error text must be a string
parseMessage(42);
// @ts-expect-error intents are P1 | P2 | P3 only
const badIntent: Intent = 'P4';
// @ts-expect-error fromMember may be null
const notNull: string = parsed.fromMember;
void [badIntent, notNull];
