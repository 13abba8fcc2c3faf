// Type-checked (never run) with `tsc -p wasm/js/tsconfig.json --noEmit`: the package's
// declarations accept correct calls and reject wrong shapes (each @ts-expect-error must fire).
import init, {
  initSync,
  parseMessage,
  stripAll,
  stripRouting,
  version,
  type Intent,
  type ParseResult,
} from '../../pkg/node/index.js';

const v: string = version();
const parsed: ParseResult = parseMessage(`[NEXT: max !P1] ${v}`);
const first: Intent | undefined = parsed.parsedAddressees[0]?.intent;
const from: string | null = parsed.fromMember;
const clean: string = stripAll(parsed.cleanContent) + stripRouting('x');
const done: boolean = parsed.isDone;
void [first, from, clean, done];

// Isomorphic code written for the web build type-checks against the node build too.
export async function isomorphicStart(): Promise<void> {
  await init({ module_or_path: '/agent_chatter_wasm_bg.wasm' });
  initSync({ module: new Uint8Array() });
}

// @ts-expect-error text must be a string
parseMessage(42);
// @ts-expect-error intents are P1 | P2 | P3 only
const badIntent: Intent = 'P4';
// @ts-expect-error fromMember may be null
const notNull: string = parsed.fromMember;
void [badIntent, notNull];

// ContextManager, used as the peer documents it (docs/architecture.md §19 (seed 001 §5)).
import {
  ContextManager,
  type AssemblerInput,
  type AssemblerOutput,
  type ContextSnapshot,
  type ConversationMessage,
  type Fate,
} from '../../pkg/node/index.js';

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

// Conversation and preview.
import {
  Conversation,
  Scenario,
  preview,
  type Action,
  type Message,
  type Preview,
  type ScenarioInput,
  type Status,
} from '../../pkg/node/index.js';

const conversation = new Conversation({
  members: [
    { name: 'kailai', kind: 'human' },
    { name: 'max', kind: 'ai', agentType: 'claude', systemInstruction: ['You are Max.', 'Be brief.'] },
  ],
  settings: { windowSize: 5, delivery: 'latest' },
});
const firstId: string = conversation.submit('Plan it [NEXT: max]', 'kailai', new Date());
for (const action of conversation.pollActions() as Action[]) {
  switch (action.type) {
    case 'deliver': {
      const flag: string | null = action.prompt.systemFlag;
      conversation.agentReplied(action.to, `done ${action.prompt.prompt.length} ${flag ?? ''}`, Date.now());
      break;
    }
    case 'awaitHuman':
      void action.member;
      break;
    case 'notice':
      if (action.kind === 'unresolvedAddressees') void action.names;
      break;
    case 'finished':
      break;
  }
}
const status: Status = conversation.status;
const waiting: string | null = conversation.waitingFor;
const history: Message[] = conversation.getMessages();
void [firstId, status, waiting, history];

const scenario: ScenarioInput = {
  team: { schemaVersion: '1.2', team: { name: 'peer', members: [{ name: 'a', type: 'human' }, { name: 'b', type: 'ai', agentType: 'codex' }] } },
  context: { windowSize: 0 },
  teamTask: null,
  messages: [{ from: 'a', content: 'hi [NEXT: b]' }],
};
const p: Preview = preview(scenario, 'b');
const again: Preview = new Scenario(JSON.stringify(scenario)).preview('b');
void [p, again];

// @ts-expect-error a scenario needs messages
preview({ team: { members: [] } }, 'b');
// @ts-expect-error member kinds are human | ai
new Conversation({ members: [{ name: 'x', kind: 'robot' }] });
// @ts-expect-error status is a closed union
const badStatus: Status = 'paused';
void badStatus;

// Sessions.
import { type ConversationSession } from '../../pkg/node/index.js';
const session: ConversationSession = conversation.exportSession();
const resumed: Conversation = Conversation.resume(JSON.stringify(session), new Date());
void resumed.pollActions();
// @ts-expect-error a session is a format and a fact log
Conversation.resume({ facts: session.facts });
const what_if = conversation.preview('max', 0, { windowSize: 0, maxTokens: 100 });
const current: number | null = what_if.explain.current;
void current;
// @ts-expect-error overrides are numbers and a boolean
conversation.preview('max', 0, { windowSize: 'all' });
