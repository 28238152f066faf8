// check.mjs SCENARIOS_FILE NA_FILE RESULTS_DIR: judges one run of the conformance suite.
// SCENARIOS_FILE is `conformance list --server` (every server scenario of the pinned version),
// NA_FILE has one "scenario  reason" per line (the scenarios that need the suite's own reference
// tools, prompts or resources), RESULTS_DIR is the suite's -o directory (one
// server-<scenario>-<time>/checks.json per scenario run).
// Every other scenario must have run, have at least one SUCCESS check and no FAILURE; a listed
// scenario the suite does not have, or one that now passes, is an error too (the list is stale).
// Prints one line per scenario; exits 1 when anything is wrong.
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";

const [scenariosFile, naFile, resultsDir] = process.argv.slice(2);
const scenarios = [...readFileSync(scenariosFile, "utf8").matchAll(/^\s+- (\S+)/gm)].map((m) => m[1]);
const na = new Map();
for (const line of readFileSync(naFile, "utf8").split("\n")) {
  const m = line.match(/^(\S+)\s+(.+)$/);
  if (m) na.set(m[1], m[2]);
}
const results = new Map();
for (const dir of readdirSync(resultsDir)) {
  const m = dir.match(/^server-(.+)-\d{4}-\d\d-\d\dT[\d-]+Z$/);
  if (m) results.set(m[1], JSON.parse(readFileSync(join(resultsDir, dir, "checks.json"), "utf8")));
}

let bad = 0;
const fail = (msg) => {
  bad++;
  console.log(`FAIL ${msg}`);
};
if (scenarios.length === 0) fail(`no server scenarios in ${scenariosFile}`);
for (const name of na.keys()) {
  if (!scenarios.includes(name)) fail(`${name}: listed as not applicable in run.sh but the suite has no such scenario; remove it`);
}
for (const name of scenarios) {
  const checks = results.get(name);
  if (!checks) {
    fail(`${name}: no results (the suite did not run it); see the suite's log`);
    continue;
  }
  const by = (s) => checks.filter((c) => c.status === s);
  const failures = by("FAILURE");
  const successes = by("SUCCESS");
  if (na.has(name)) {
    if (successes.length > 0 && failures.length === 0) {
      fail(`${name}: passes now, yet run.sh lists it as not applicable (${na.get(name)}); remove it from the list`);
    } else {
      console.log(`n/a  ${name}: ${na.get(name)}`);
    }
    continue;
  }
  if (failures.length > 0) {
    for (const c of failures) fail(`${name}: ${c.id}: ${c.errorMessage ?? c.description}`);
    continue;
  }
  if (successes.length === 0) {
    fail(`${name}: no check succeeded (${checks.map((c) => `${c.id} ${c.status}`).join(", ") || "no checks"}); if it needs the suite's reference server, list it as not applicable in run.sh`);
    continue;
  }
  for (const c of by("WARNING")) console.log(`warn ${name}: ${c.id}: ${c.errorMessage ?? c.description}`);
  console.log(`ok   ${name} (${successes.length} checks)`);
}
process.exit(bad > 0 ? 1 : 0);
