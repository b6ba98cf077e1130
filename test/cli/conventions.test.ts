/**
 * The CLI's conventions, kubectl's way, through the real command: help on stdout with exit 0 (bare, `--help`,
 * `help CMD`), usage errors as one `error:` line plus the subcommand's help hint with exit 1, `version` with
 * `-o json|yaml`, and command descriptions written alike.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { ROOT, runCli } from '../helpers/process.js';

const VERSION = (JSON.parse(readFileSync(`${ROOT}package.json`, 'utf8')) as { version: string }).version;

test('bare ctrlmetrics, --help and help CMD print the help on stdout and exit 0', async () => {
  const [bare, help, sub] = await Promise.all([runCli([]), runCli(['--help']), runCli(['help', 'scrape'])]);
  for (const r of [bare, help]) {
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stderr, '');
    assert.match(r.stdout, /^Usage: ctrlmetrics \[options\] \[command\]\n/);
    assert.match(r.stdout, /^ {2}version \[options\] +Print the ctrlmetrics version/m);
  }
  assert.equal(bare.stdout, help.stdout);
  assert.equal(sub.code, 0);
  assert.match(sub.stdout, /^Usage: ctrlmetrics scrape \[options\] <url>\n/);
});

test('every command description starts with a capital letter and ends without a period', async () => {
  const r = await runCli([]);
  const commands = r.stdout
    .split('Commands:\n')[1]
    .split('\n')
    .filter((l) => /^ {2}\S/.test(l));
  assert.ok(commands.length >= 12, r.stdout);
  for (const line of commands) {
    const description = line.replace(/^ {2}\S+(?: \[[^\]]+\]| <[^>]+>)* +/, '');
    assert.match(description, /^[A-Z]/, line);
    assert.doesNotMatch(description, /\.$/, line);
  }
});

test("usage errors: one error line in kubectl's words, the subcommand's help hint, exit 1", async () => {
  const cases: Array<[string[], string]> = [
    [
      ['scrape', 'https://127.0.0.1:1/metrics', '--bogus'],
      "error: unknown flag: --bogus\nSee 'ctrlmetrics scrape --help' for usage.\n",
    ],
    [['doctor'], 'error: required flag(s) "namespace" not set\nSee \'ctrlmetrics doctor --help\' for usage.\n'],
    [['scrape'], "error: missing required argument 'url'\nSee 'ctrlmetrics scrape --help' for usage.\n"],
    [
      ['no-such-command'],
      'error: unknown command "no-such-command" for "ctrlmetrics"\nRun \'ctrlmetrics --help\' for usage.\n',
    ],
    [
      ['version', '-o', 'xml'],
      "error: --output must be 'yaml' or 'json'\nSee 'ctrlmetrics version --help' for usage.\n",
    ],
  ];
  const results = await Promise.all(cases.map(([args]) => runCli(args)));
  results.forEach((r, i) => {
    assert.equal(r.code, 1, `${cases[i][0].join(' ')}: ${r.stderr}`);
    assert.equal(r.stdout, '');
    assert.equal(r.stderr, cases[i][1]);
  });
  const help = await runCli(['doctor', '--help']);
  assert.match(help.stdout, /-n, --namespace <ns> +the manager's namespace, <project>-system \(required\)/);
});

test('version: the package version, Node.js and the platform; -o json and -o yaml as kubectl version prints them', async () => {
  const [plain, json, yaml, flag] = await Promise.all([
    runCli(['version']),
    runCli(['version', '-o', 'json']),
    runCli(['version', '-o', 'yaml']),
    runCli(['--version']),
  ]);
  assert.equal(plain.code, 0, plain.stderr);
  assert.equal(
    plain.stdout,
    `Client Version: v${VERSION}\nNode.js Version: ${process.version}\nPlatform: ${process.platform}/${process.arch}\n`,
  );
  const expected = {
    clientVersion: {
      gitVersion: `v${VERSION}`,
      nodeVersion: process.version,
      platform: `${process.platform}/${process.arch}`,
    },
  };
  assert.equal(json.code, 0);
  assert.deepEqual(JSON.parse(json.stdout), expected);
  assert.match(
    json.stdout,
    /^\{\n {2}"clientVersion": \{\n {4}"gitVersion"/,
    'two-space indentation, as kubectl version -o json',
  );
  assert.equal(yaml.code, 0);
  assert.deepEqual(parseYaml(yaml.stdout), expected);
  assert.equal(flag.stdout, `${VERSION}\n`);
});
