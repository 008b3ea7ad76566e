// A real MCP client for tests/integration/t_mcp.sh: the official TypeScript
// SDK, either @modelcontextprotocol/sdk 1.x (protocol 2025-11-25, initialize
// handshake) or @modelcontextprotocol/client 2.x pinned to 2026-07-28
// (server/discover, per-request _meta, the Mcp-* headers), over stdio
// (spawning `sandlens mcp`) or Streamable HTTP (POST /mcp). Lists the tools,
// calls every one, and prints one JSON report on stdout for the test to check.
//
//   node mcp_client.js NODE_DIR CONFIG_JSON
//   CONFIG: {"sdk":"v1"|"v2", "transport":"stdio"|"http", "url":..., "command":...,
//            "args":[...], "env":{...}, "headers":{...}, "container":ID, "admin":bool}
'use strict';
const path = require('path');
const { createRequire } = require('module');

const nodeDir = process.argv[2];
const cfg = JSON.parse(process.argv[3]);
const req = createRequire(path.join(nodeDir, 'node_modules', 'x.js'));

function load() {
	if (cfg.sdk === 'v1') {
		return {
			Client: req('@modelcontextprotocol/sdk/client/index.js').Client,
			Stdio: req('@modelcontextprotocol/sdk/client/stdio.js').StdioClientTransport,
			Http: req('@modelcontextprotocol/sdk/client/streamableHttp.js').StreamableHTTPClientTransport,
			opts: {},
		};
	}
	const c = req('@modelcontextprotocol/client');
	return {
		Client: c.Client,
		Stdio: req('@modelcontextprotocol/client/stdio').StdioClientTransport,
		Http: c.StreamableHTTPClientTransport,
		opts: { versionNegotiation: { mode: { pin: '2026-07-28' } } },
	};
}

async function call(client, name, args, timeout) {
	const t0 = Date.now();
	try {
		const r = await client.callTool({ name, arguments: args }, undefined, { timeout: timeout || 60000 });
		const text = (r.content || []).filter((c) => c.type === 'text').map((c) => c.text).join('');
		return { name, ok: true, isError: !!r.isError, text, structured: r.structuredContent || null, ms: Date.now() - t0 };
	} catch (e) {
		return { name, ok: false, code: e.code, message: String(e.message || e), ms: Date.now() - t0 };
	}
}

async function main() {
	const sdk = load();
	const client = new sdk.Client({ name: 'sandlens-test', version: '1.0.0' }, sdk.opts);
	let transport;
	if (cfg.transport === 'stdio')
		transport = new sdk.Stdio({ command: cfg.command, args: cfg.args, env: { ...process.env, ...(cfg.env || {}) }, stderr: 'pipe' });
	else
		transport = new sdk.Http(new URL(cfg.url), { requestInit: { headers: cfg.headers || {} } });
	const report = { sdk: cfg.sdk, transport: cfg.transport, calls: [] };
	// the 1.x client hands the negotiated version to the transport
	const setv = transport.setProtocolVersion;
	transport.setProtocolVersion = (v) => { report.protocolVersion = v; if (setv) setv.call(transport, v); };
	await client.connect(transport);
	if (client.getNegotiatedProtocolVersion)
		report.protocolVersion = client.getNegotiatedProtocolVersion() || report.protocolVersion;
	report.serverVersion = client.getServerVersion();
	const list = await client.listTools();
	report.tools = list.tools.map((t) => ({
		name: t.name,
		readOnly: t.annotations ? t.annotations.readOnlyHint : undefined,
		hasInput: !!t.inputSchema, hasOutput: !!t.outputSchema,
	}));
	const c = cfg.container;
	const calls = report.calls;
	calls.push(await call(client, 'list_containers', { limit: 2000 }));
	calls.push(await call(client, 'container_health', { container: c.slice(0, 16) })); // a prefix
	calls.push(await call(client, 'recent_faults', { since: '10m' }));
	calls.push(await call(client, 'recent_faults', { container: c.slice(0, 12), since: '10m' }));
	calls.push(await call(client, 'hw_faults', { since: '10m' }));
	calls.push(await call(client, 'explain_latency', { container: c }));
	calls.push(await call(client, 'list_captures', {}));
	calls.push(await call(client, 'recent_faults', { limit: 0 })); // out of range: a tool error
	const a = await call(client, 'capture_profile', { container: c, duration_s: 2 });
	calls.push(a);
	// get_profile until the capture ended (HTTP /mcp does not wait: poll)
	async function done(id, top) {
		let r;
		for (let i = 0; i < 60; i++) {
			r = await call(client, 'get_profile', { id, wait_s: 10, top });
			if (!r.ok || !r.structured || ['done', 'failed', 'cancelled'].includes(r.structured.status))
				break;
			await new Promise((res) => setTimeout(res, 500));
		}
		return r;
	}
	if (cfg.admin && a.ok && a.structured) {
		calls.push(await done(a.structured.id, 20));
		const b = await call(client, 'capture_profile', { container: c, duration_s: 1, kind: 'off_cpu' });
		calls.push(b);
		if (b.ok && b.structured) {
			calls.push(await done(b.structured.id, 5));
			calls.push(await call(client, 'diff_profiles', { a: a.structured.id, b: b.structured.id, top: 5 }));
		}
		calls.push(await call(client, 'list_captures', { limit: 5 }));
	} else {
		calls.push(await call(client, 'get_profile', { id: 't-0000000000000000' }));
		calls.push(await call(client, 'diff_profiles', { a: 't-0000000000000000', b: 't-0000000000000001' }));
	}
	try {
		await client.callTool({ name: 'no_such_tool', arguments: {} });
		calls.push({ name: 'no_such_tool', ok: true });
	} catch (e) {
		calls.push({ name: 'no_such_tool', ok: false, code: e.code, message: String(e.message || e) });
	}
	await client.close();
	process.stdout.write(JSON.stringify(report) + '\n');
}

main().catch((e) => {
	process.stdout.write(JSON.stringify({ fatal: String(e && e.stack || e) }) + '\n');
	process.exit(1);
});
