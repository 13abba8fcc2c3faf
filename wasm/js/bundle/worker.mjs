// A Cloudflare Worker using the package by name, bundled by runtimes.mjs as wrangler bundles one
// and run by workerd (miniflare): answers what entry.mjs prints.
import { ContextManager, Conversation, initSync, parseMessage, preview, version } from 'agent-chatter-wasm';

export default {
  async fetch() {
    initSync(); // does nothing here, as isomorphic code expects
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
    return new Response(JSON.stringify({
      version: version(),
      intent: parseMessage('Hello [NEXT: max !P1]').parsedAddressees[0].intent,
      prompt,
      preview: preview(scenario, 'max').prompt,
      actions,
    }));
  },
};
