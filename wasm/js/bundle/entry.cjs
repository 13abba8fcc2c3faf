// The same program written as CommonJS (`require`), bundled into CommonJS output.
const { ContextManager, Conversation, parseMessage, preview, version } = require('agent-chatter-wasm');

const cm = new ContextManager();
cm.addMessage({ speaker: { id: 'kailai', name: 'kailai', displayName: 'Kailai', type: 'human' }, content: 'Hello [NEXT: max !P1]' });
const { prompt } = cm.assemblePrompt('codex', cm.getContextForAgent('max', 'codex'));
const scenario = {
  team: { members: [{ name: 'kailai', kind: 'human' }, { name: 'max', kind: 'ai', agentType: 'codex' }] },
  messages: [{ from: 'kailai', content: 'Hi [NEXT: max]' }],
};
const conversation = new Conversation(scenario.team);
conversation.submit('Plan it [NEXT: max]', 'kailai');
const actions = conversation.pollActions().map((a) => a.type);
console.log(JSON.stringify({
  version: version(),
  intent: parseMessage('Hello [NEXT: max !P1]').parsedAddressees[0].intent,
  prompt,
  preview: preview(scenario, 'max').prompt,
  actions,
}));
