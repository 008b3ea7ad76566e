// Decode OTLP request bodies with the OpenTelemetry project's own .proto
// files (protobufjs, t_otlp): node otlp_decode.js PROTO_DIR logs|metrics FILE...
// prints one JSON object per file (a decode error exits 1).
const path = require("path"), fs = require("fs"), protobuf = require("protobufjs");
const [dir, kind, ...files] = process.argv.slice(2);
const root = new protobuf.Root();
root.resolvePath = (origin, target) => path.join(dir, target);
root.loadSync([`opentelemetry/proto/collector/${kind}/v1/${kind}_service.proto`], { keepCase: false });
const T = root.lookupType(`opentelemetry.proto.collector.${kind}.v1.Export${kind === "logs" ? "Logs" : "Metrics"}ServiceRequest`);
for (const f of files) {
  const msg = T.decode(fs.readFileSync(f));
  const err = T.verify(msg);
  if (err) { console.error(`${f}: ${err}`); process.exit(1); }
  console.log(JSON.stringify(T.toObject(msg, { longs: String, enums: String, bytes: String, arrays: true })));
}
