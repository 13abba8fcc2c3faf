// preview(scenario, memberId) and the Scenario class against the same scenario fixtures as the
// Rust tests (tests/fixtures/scenarios/*.json): the expected outputs in
// wasm/tests/expected/previews/ are checked against the core natively by
// wasm/tests/previews.rs, so equal results here mean the same bytes everywhere
// (docs/architecture.md §11b).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdir } from 'node:fs/promises';
import { builds, readJson, readText, root } from './helpers.mjs';

const scenarioDir = new URL('tests/fixtures/scenarios/', root);
const expectedDir = 'wasm/tests/expected/previews/';
const stems = (await readdir(scenarioDir)).filter((f) => f.endsWith('.json')).map((f) => f.slice(0, -5)).sort();

const cases = [];
for (const stem of stems) {
  const text = await readText(`tests/fixtures/scenarios/${stem}.json`);
  const expectedFiles = (await readdir(new URL(expectedDir, root))).filter((f) => f.startsWith(`${stem}.`));
  assert.ok(expectedFiles.length > 0, `no expected previews for ${stem}`);
  for (const file of expectedFiles) {
    const member = file.slice(stem.length + 1, -5);
    cases.push({ stem, text, member, expected: await readJson(expectedDir + file) });
  }
}

for (const [build, m] of builds) {
  test(`${build}: every scenario fixture previews exactly as the Rust core does`, () => {
    assert.ok(cases.length >= 2);
    for (const { stem, text, member, expected } of cases) {
      const label = `${stem} for ${member}`;
      if (expected.error) {
        assert.throws(() => m.preview(text, member), { message: `preview: ${expected.error}` }, label);
        continue;
      }
      assert.deepEqual(m.preview(text, member), expected, `${label} (JSON text)`);
      assert.deepEqual(m.preview(JSON.parse(text), member), expected, `${label} (object)`);
      assert.deepEqual(new m.Scenario(text).preview(member), expected, `${label} (Scenario class)`);
    }
  });

  test(`${build}: preview answers the last message; systemFlag is null when there is none`, async () => {
    const demo = await readJson('tests/fixtures/scenarios/demo.json');
    const sarah = m.preview(demo, 'Sarah'); // a member's name works as well as its id
    assert.equal(sarah.systemFlag, null);
    assert.ok(sarah.prompt.startsWith('[SYSTEM]\nYou are Sarah, you write the code.'));
    assert.ok(sarah.prompt.endsWith('[MESSAGE]\nDone: login.rs and tests.'));
    assert.equal(sarah.explain.totalBytes, Buffer.byteLength(sarah.prompt));
  });

  test(`${build}: a scenario with window 0 shows no history`, async () => {
    const demo = await readJson('tests/fixtures/scenarios/demo.json');
    const p = m.preview({ ...demo, context: { ...demo.context, windowSize: 0 } }, 'max');
    assert.equal(p.prompt, '[TEAM_TASK]\nBuild a login page\n\n[MESSAGE]\nDone: login.rs and tests.');
  });

  test(`${build}: the Scenario class counts its messages and previews many members`, async () => {
    const demo = await readJson('tests/fixtures/scenarios/demo.json');
    const s = new m.Scenario(demo);
    assert.equal(s.messageCount, demo.messages.length);
    assert.deepEqual(s.preview('max'), m.preview(demo, 'max'));
    assert.throws(() => s.preview('zed'), { message: 'preview: member: "zed" is not a member (members: kailai, max, sarah)' });
    assert.ok(s.preview('sarah').prompt.length > 0, 'still usable after an error');
  });

  test(`${build}: bad scenarios throw an Error naming the field`, async () => {
    const bad = ['scenario-ai-only-team', 'scenario-missing-content', 'scenario-to-not-a-list', 'scenario-unknown-member'];
    for (const name of bad) {
      const text = await readText(`tests/fixtures/bad/${name}.json`);
      assert.throws(() => m.preview(text, 'max'), (e) => e instanceof Error && e.message.startsWith('preview(scenario): '), name);
    }
    assert.throws(() => m.preview('{"team":', 'max'), /preview\(scenario\): .*line 1/);
    assert.throws(() => m.preview(undefined, 'max'), /preview\(scenario\): expected an object or JSON text, found undefined/);
  });
}
