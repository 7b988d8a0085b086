// Import rules of Taskbay, checked by `npm run lint` and .ci/run. docs/ARCHITECTURE.md, "Modules
// and what each may import", explains them; keep the two in step.
//
// Dependencies follow the data path: agent message -> observation -> request -> decision ->
// delivery -> audit -> subscription. A module never imports a later step; a later step adds its
// part (GraphQL fields, decision hooks, jobs, routes) to the earlier one, and app.ts assembles
// the whole.

const { builtinModules } = require('node:module');

const SRC = '^server/src/';

/** Node built-ins as dependency-cruiser names them once resolved ('node:crypto' becomes 'crypto'). */
const NODE_BUILTIN = `^(${builtinModules.map((name) => name.replace(/[/.]/g, '\\$&')).join('|')})$`;

/**
 * The domain modules, read from modules.ts (each `import { xModule } from './<folder>/module.js'`
 * line, in its order), so a new domain is known here by its line there; each folder's module.ts is
 * its face.
 */
const DOMAINS = [
  ...require('node:fs')
    .readFileSync(require('node:path').join(__dirname, 'server/src/modules.ts'), 'utf8')
    .matchAll(/^import \{ \w+Module \} from '\.\/([\w-]+)\/module\.js';$/gm),
].map((m) => m[1]);
if (DOMAINS.length < 10) throw new Error(`modules.ts names ${DOMAINS.length} domain modules: has its import form changed?`);
const DOMAIN = `${SRC}(${DOMAINS.join('|')})/`;

/**
 * What another domain may import of a domain: its face (module.ts), its entities (entities.ts, for
 * relations and row types) and its command-line face (cli.ts, which the CLI loads on demand
 * without the server).
 */
const FACE = `${SRC}(${DOMAINS.join('|')})/(module|entities|cli)\\.ts$`;

/**
 * Server modules the console (web/) bundles: plain TypeScript shared by server and browser, so
 * the server and the console apply one rule. lib/ modules qualify while they import no Node
 * built-in (the rule browser-bundle-no-node-builtins checks what web/ actually reaches).
 */
const BROWSER_SAFE = [
  `${SRC}limits\\.ts$`,
  `${SRC}edit-rules\\.ts$`,
  `${SRC}a2a/extensions\\.ts$`,
  `${SRC}lib/`,
  `${SRC}forms/form-definition\\.ts$`,
  `${SRC}commands/label\\.ts$`,
  `${SRC}contract/options\\.ts$`,
  `${SRC}audit/catalogue\\.ts$`,
];

/**
 * The kits every domain builds on, which import no domain: the foundation (lib/, net/, db/, jobs/,
 * errors, limits, log), the protocol clients (a2a/, agui/protocol/), the HTTP and GraphQL plumbing
 * (http/, graphql/, events/), shared rules (forms/, access.ts, edit-rules.ts), the verifier's way
 * in (verify-approval/) and the module kit. A kit may read a domain's entities (a row type).
 */
const KIT = [
  `${SRC}(lib|net|db|jobs|http|graphql|forms|a2a|verify-approval)/`,
  `${SRC}agui/protocol/`,
  `${SRC}(errors|limits|log|startup-errors|access|edit-rules|module-kit)\\.ts$`,
];

/** Test files of the console run in Node under vitest and may check the console against any server module. */
const WEB_SOURCE = { path: '^web/', pathNot: ['\\.test(-support)?\\.tsx?$', '^web/src/gql/'] };

/** @taskbay/agent's adapters (packages/taskbay-agent/src/<file>.ts) and the framework each one is for. */
const AGENT_ADAPTERS = [
  ['ai-sdk', 'ai'],
  ['openai-agents', '@openai/agents-core'],
  ['langgraph', '@langchain/langgraph'],
];
const AGENT_FRAMEWORKS = `node_modules/(${AGENT_ADAPTERS.map(([, framework]) => framework).join('|')})/`;

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'An import cycle ties modules into one: nothing in it can be read, tested or changed alone.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'another-domain-only-through-its-face',
      severity: 'error',
      comment:
        "A domain is imported by another only through its face, module.ts (what it offers the others), or its entities.ts (relations, row types); the shared browser-safe rules are kits. Everything else in a folder is that module's own, free to change (docs/ARCHITECTURE.md \"Adding a domain\").",
      from: { path: [DOMAIN, `${SRC}(events|observability)/`, `${SRC}(app|main|cli)\\.ts$`] },
      to: { path: DOMAIN, pathNot: [`${SRC}$1/`, FACE, `${SRC}agui/protocol/`, ...BROWSER_SAFE] },
    },
    {
      name: 'kits-import-no-domain',
      severity: 'error',
      comment: 'A kit is what every domain builds on: it imports no domain (a row type of entities.ts at most), so any domain can use it without a cycle.',
      from: { path: KIT },
      to: { path: DOMAIN, pathNot: [`${SRC}(${DOMAINS.join('|')})/entities\\.ts$`, `${SRC}agui/protocol/`, ...BROWSER_SAFE] },
    },
    {
      name: 'audit-imports-no-domain',
      severity: 'error',
      comment: 'The audit log is written by every module and reads none: audit/ imports no domain, not even an entity.',
      from: { path: `${SRC}audit/` },
      to: { path: DOMAIN, pathNot: `${SRC}audit/` },
    },
    {
      name: 'tasks-imports-no-later-step',
      severity: 'error',
      comment:
        'Observation comes first on the data path: tasks/ imports no request, decision, delivery, evidence or later module. What they do with an observation they register (tasks/observation-hooks.ts), and another protocol its transport (tasks/transports.ts).',
      from: { path: `${SRC}tasks/` },
      to: { path: `${SRC}(agui|approvals|escalation|decisions|approval-signing|delivery|evidence|commands|hooks|contract|webhooks)/` },
    },
    {
      name: 'a2a-is-protocol-only',
      severity: 'error',
      comment: 'a2a/ speaks the A2A protocol and nothing else: it imports only itself, net/ (the guarded network) and the foundation kits (lib/, limits.ts).',
      from: { path: `${SRC}a2a/` },
      to: { path: SRC, pathNot: `${SRC}(a2a|net|lib)/|${SRC}limits\\.ts$` },
    },
    {
      name: 'agui-protocol-is-protocol-only',
      severity: 'error',
      comment:
        'agui/protocol/ speaks the AG-UI protocol and nothing else: it imports only itself, net/ (the guarded network, its failure kinds), lib/, limits.ts and the SSE reader of a2a/ (a2a/sse.ts, protocol-neutral).',
      from: { path: `${SRC}agui/protocol/` },
      to: { path: SRC, pathNot: `${SRC}(agui/protocol|net|lib)/|${SRC}limits\\.ts$|${SRC}a2a/sse\\.ts$` },
    },
    {
      name: 'approvals-imports-no-later-step',
      severity: 'error',
      comment: 'A request comes before its decision, delivery, contract view and command approval: approvals/ imports none of them.',
      from: { path: `${SRC}approvals/` },
      to: { path: `${SRC}(decisions|delivery|evidence|contract|commands|hooks|agui|escalation)/` },
    },
    {
      name: 'policies-imports-no-later-step',
      severity: 'error',
      comment:
        'A policy is chosen when a request opens, before any decision: policies/ and groups/ import no request, decision, delivery, command or contract module (the decision path reads the frozen rules, the policy snapshot, instead).',
      from: { path: `${SRC}(policies|groups)/` },
      to: { path: `${SRC}(approvals|decisions|delivery|commands|contract|hooks|agui|escalation)/` },
    },
    {
      name: 'decisions-imports-no-later-step',
      severity: 'error',
      comment:
        'A decision comes before command approvals and AG-UI resumes react to it: decisions/ runs the hooks other modules register (decisions/hooks.ts) and imports neither commands/, hooks/, agui/ nor contract/.',
      from: { path: `${SRC}decisions/` },
      to: { path: `${SRC}(commands|hooks|agui|contract|evidence)/` },
    },
    {
      name: 'delivery-imports-no-decision-logic',
      severity: 'error',
      comment: 'delivery/ carries out a decision already taken: it imports no decisions/, commands/ or contract/ logic (the decision row it refers to, decisions/entities.ts, is allowed).',
      from: { path: `${SRC}delivery/` },
      to: { path: `${SRC}(decisions|commands|contract|agui|hooks)/`, pathNot: `${SRC}decisions/entities\\.ts$` },
    },
    {
      name: 'evidence-imports-no-decision-logic',
      comment:
        'evidence/ records what an agent reports executing for a decision already taken and delivered: it reads the decision, delivery and request rows (their entities.ts) and adds its fields to Approval and Execution, and imports no decision or command logic.',
      severity: 'error',
      from: { path: `${SRC}evidence/` },
      to: { path: `${SRC}(decisions|commands|contract|hooks|agui)/`, pathNot: `${SRC}decisions/entities\\.ts$` },
    },
    {
      name: 'verify-approval-stands-alone',
      severity: 'error',
      comment:
        'verify-approval/ is the server\'s way in to @taskbay/verify (packages/taskbay-verify/src), which agent authors install and agent-taskbay/verify-approval bundles: it reaches nothing of the server, so the verifier runs without it.',
      from: { path: `${SRC}verify-approval/` },
      to: { reachable: true, path: SRC, pathNot: `${SRC}verify-approval/` },
    },
    {
      name: 'taskbay-verify-stands-alone',
      severity: 'error',
      comment:
        '@taskbay/verify (packages/taskbay-verify/src) is published with no dependencies: its sources import each other and Node built-ins, nothing of the server. (That they import no npm package is checked on the shipped files: packages/taskbay-verify-pack.test.ts, packages/agent-taskbay.test.ts.)',
      from: { path: '^packages/taskbay-verify/src/' },
      to: { pathNot: ['^packages/taskbay-verify/src/', NODE_BUILTIN] },
    },
    {
      name: 'taskbay-agent-stands-alone',
      severity: 'error',
      comment:
        '@taskbay/agent (packages/taskbay-agent/src) is published with one dependency, @taskbay/verify (by its entry), and the frameworks as optional peers: its sources import each other, those, and Node built-ins, nothing of the server. (The pack test installs and runs it outside the repository: agent-package-pack.test.ts.)',
      from: { path: '^packages/taskbay-agent/src/' },
      to: {
        pathNot: [
          '^packages/taskbay-agent/src/',
          '^packages/taskbay-verify/src/index\\.ts$',
          AGENT_FRAMEWORKS,
          NODE_BUILTIN,
        ],
      },
    },
    {
      name: 'taskbay-agent-core-imports-no-framework',
      severity: 'error',
      comment:
        'The core of @taskbay/agent (requestApproval, the tool-call action) imports no framework and no adapter: each adapter is a subpath, so an AI SDK agent installs no LangGraph.',
      from: { path: '^packages/taskbay-agent/src/', pathNot: `^packages/taskbay-agent/src/(${AGENT_ADAPTERS.map(([file]) => file).join('|')})\\.ts$` },
      to: { path: [AGENT_FRAMEWORKS, `^packages/taskbay-agent/src/(${AGENT_ADAPTERS.map(([file]) => file).join('|')})\\.ts$`] },
    },
    ...AGENT_ADAPTERS.map(([file, framework]) => ({
      name: `taskbay-agent-${file}-imports-${framework.replace(/^@/, '').replace('/', '-')}-only`,
      severity: 'error',
      comment: `@taskbay/agent/${file} is the adapter of ${framework}: it imports that framework alone, and no other adapter.`,
      from: { path: `^packages/taskbay-agent/src/${file}\\.ts$` },
      to: { path: [AGENT_FRAMEWORKS, '^packages/taskbay-agent/src/(ai-sdk|openai-agents|langgraph)\\.ts$'], pathNot: `node_modules/${framework}/` },
    })),
    {
      name: 'dispatch-only-from-app',
      severity: 'error',
      comment: 'app.ts assembles the route list and hands it to http/dispatch.ts; route modules only declare routes (http/route.ts).',
      from: { pathNot: `${SRC}app\\.ts$` },
      to: { path: `${SRC}http/dispatch\\.ts$` },
    },
    {
      name: 'web-imports-only-browser-safe-server-modules',
      severity: 'error',
      comment: 'The console bundles what it imports: only the shared browser-safe rules of the server, never a service, entity or driver.',
      from: WEB_SOURCE,
      to: { path: '^server/', pathNot: BROWSER_SAFE },
    },
    {
      name: 'browser-safe-stays-browser-safe',
      severity: 'error',
      comment: 'A browser-safe server module imports only other browser-safe modules, so the console bundle never pulls in more.',
      from: { path: BROWSER_SAFE, pathNot: `${SRC}lib/` },
      to: { path: '^server/', pathNot: BROWSER_SAFE },
    },
    {
      name: 'browser-bundle-no-node-builtins',
      severity: 'error',
      comment: 'Nothing the console reaches may need a Node built-in (imported as node:crypto, node:fs, ...).',
      from: WEB_SOURCE,
      to: { reachable: true, path: NODE_BUILTIN },
    },
    {
      name: 'server-imports-no-web-or-tests',
      severity: 'error',
      comment: 'The server runs without the console sources and without its tests.',
      from: { path: SRC },
      to: { path: ['^web/', '^server/test/'] },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    // Built output of this repository's packages is not cruised; a dependency's dist/ stays visible
    // as the leaf it resolves to (doNotFollow), so rules can name the packages a module imports.
    exclude: { path: ['^((?!node_modules/).)*(^|/)dist/'] },
    // Type-only imports count: a cycle or a wrong direction in types is one in the design.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      mainFields: ['module', 'main', 'types', 'typings'],
    },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
