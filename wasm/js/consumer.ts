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

// ContextManager, used as the peer documents it (seed 001 §5).
import {
  ContextManager,
  type AssemblerInput,
  type AssemblerOutput,
  type ContextSnapshot,
  type ConversationMessage,
  type Fate,
} from '../../pkg/node/agent_chatter_wasm.js';

const cm = new ContextManager({
  contextWindowSize: 5,
  onMessageAdded: (msg: ConversationMessage) => void msg.timestamp.getTime(),
  onTeamTaskChanged: (task: string | null) => void task,
});
const stored: ConversationMessage = cm.addMessage({
  speaker: { id: 'kailai', name: 'kailai', displayName: 'Kailai', type: 'human' },
  content: 'Plan it [NEXT: max]',
  routing: { rawNextMarkers: ['max'], resolvedAddressees: [{ identifier: 'max', memberId: 'max', memberName: null }] },
});
const latest: ConversationMessage | null = cm.getLatestMessage();
const all: ConversationMessage[] = cm.getMessages();
cm.setTeamTask('ship');
const task: string | null = cm.getTeamTask();
const input: AssemblerInput = cm.getContextForAgent('max', 'claude', { systemInstruction: 'Be brief.' });
const output: AssemblerOutput = cm.assemblePrompt('claude', input);
const flag: string | undefined = output.systemFlag;
const fate: Fate['fate'] = output.explain.messages[0]?.fate ?? 'current';
const snapshot: ContextSnapshot = cm.exportSnapshot();
cm.importSnapshot(snapshot);
cm.clear();
void [stored, latest, all, task, flag, fate];

// @ts-expect-error speaker.type is 'human' | 'ai' | 'system'
cm.addMessage({ speaker: { id: 'x', name: 'x', type: 'robot' }, content: 'x' });
// @ts-expect-error content is required
cm.addMessage({ speaker: { id: 'x', name: 'x', type: 'human' } });
// @ts-expect-error contextWindowSize is a number
new ContextManager({ contextWindowSize: '5' });
// @ts-expect-error snapshots have version 1
cm.importSnapshot({ messages: [], teamTask: null, timestamp: 0, version: 2 });
