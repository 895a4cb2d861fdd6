#!/usr/bin/env python3
"""Checks of the Grafana dashboard and the Prometheus alert rules.

  monitoring.py dashboard PROMTOOL SOURCES DASHBOARD
  monitoring.py alerts PROMTOOL SOURCES RULES TESTS

Both read the metrics the code registers (`registry.counter|gauge|histogram(
"name", …, labels: [...])` in SOURCES/**/*.swift) and fail for a metric name a
query uses that no code registers (a histogram's `_bucket`, `_sum`, `_count`
series count as its own), or a label name a query matches or groups by that
none of its metrics has (beyond the target labels job and instance, and `le`
of a histogram's buckets). `up` is Prometheus's own.

dashboard: JSON model with schemaVersion >= 36, a `datasource` variable of
type datasource for Prometheus, every datasource reference `${datasource}` (no
hard-coded uid), unique panel ids, each panel with at least one query. Every
query must parse: with Grafana's variables replaced (`$__rate_interval` and
the like by 5m, dashboard variables by `.*`), each becomes a recording rule of
a rule file made on the fly, and `promtool check rules` must accept it. The
`label_values(metric, label)` of query variables are checked the same way.

alerts: every rule is an alert with `for`, `labels.severity` (critical,
warning or info) and non-empty `annotations.summary` and `description`;
`$labels.X` in annotations names a label the expression can carry; no tenant
label is grouped by or shown. Then `promtool test rules` runs TESTS against a
copy of RULES without annotations (promtool compares annotations verbatim;
`promtool check rules` checks their templates), and every alert must have a
test that fires it.
"""
import json
import os
import re
import subprocess
import sys
import tempfile

import yaml

failures = []

# Series Prometheus itself writes for each target.
PROMETHEUS_SERIES = {"up": set(), "scrape_duration_seconds": set(), "scrape_samples_scraped": set()}
TARGET_LABELS = {"job", "instance"}
HISTOGRAM_SUFFIXES = ("_bucket", "_sum", "_count")
AGGREGATIONS = {"sum", "min", "max", "avg", "group", "stddev", "stdvar", "count", "count_values", "bottomk", "topk", "quantile"}
GROUPING = {"by", "without", "on", "ignoring", "group_left", "group_right"}
KEYWORDS = {"and", "or", "unless", "offset", "bool", "atan2", "inf", "nan"} | GROUPING | AGGREGATIONS
# Grafana's built-in variables, and what stands in for them in a parse.
GRAFANA_BUILTINS = {"__rate_interval": "5m", "__interval": "5m", "__range": "5m"}
SEVERITIES = {"critical", "warning", "info"}
# Labels that would name a tenant (or anything near personal data) on an alert.
FORBIDDEN_ALERT_LABELS = {"tenant"}


def fail(where, message):
    failures.append(f"{where}: {message}")


# --- What the code registers -------------------------------------------------

def swift_call_arguments(text, start):
    """The text from `start` (just after an opening parenthesis) to its closing one, skipping string literals."""
    depth, index = 1, start
    while index < len(text):
        char = text[index]
        if char == '"':
            index += 1
            while index < len(text) and text[index] != '"':
                index += 2 if text[index] == "\\" else 1
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth == 0:
                return text[start:index]
        index += 1
    raise ValueError("unbalanced parentheses")


def registered_metrics(sources):
    """{name: (type, labels)} of every metric registered in sources/**/*.swift."""
    metrics = {}
    for folder, _, files in os.walk(sources):
        for file in sorted(files):
            if not file.endswith(".swift"):
                continue
            path = os.path.join(folder, file)
            with open(path, encoding="utf-8") as f:
                text = f.read()
            for match in re.finditer(r'registry\.(counter|gauge|histogram)\(\s*"([A-Za-z_:][A-Za-z0-9_:]*)"', text):
                kind, name = match.groups()
                arguments = swift_call_arguments(text, match.start() + len(f"registry.{kind}("))
                labels = re.search(r"\blabels:\s*\[([^\]]*)\]", arguments)
                if labels is None and re.search(r"\blabels:", arguments):
                    fail(path, f"cannot read the labels of {name} (not a literal list)")
                    continue
                label_names = set(re.findall(r'"([^"]+)"', labels.group(1))) if labels else set()
                if name in metrics:
                    fail(path, f"{name} registered twice")
                metrics[name] = (kind, label_names)
    if not metrics:
        fail(sources, "no registry.counter/gauge/histogram calls found")
    return metrics


# --- PromQL, as far as names go -----------------------------------------------

TOKEN = re.compile(r"""
    (?P<space>\s+|\#[^\n]*)
  | (?P<string>"(?:\\.|[^"\\])*"|'(?:\\.|[^'\\])*'|`[^`]*`)
  | (?P<range>\[[^\]]*\])
  | (?P<number>[0-9][0-9a-zA-Z.]*|\.[0-9][0-9a-zA-Z]*)
  | (?P<ident>[A-Za-z_][A-Za-z0-9_:]*|:[A-Za-z_][A-Za-z0-9_:]*)
  | (?P<op>=~|!~|!=|==|>=|<=|[-+*/%^=<>(){},@])
""", re.X)


def tokens(expr):
    out, index = [], 0
    while index < len(expr):
        match = TOKEN.match(expr, index)
        if not match:
            raise ValueError(f"cannot read {expr[index:index + 20]!r}")
        if match.lastgroup != "space":
            out.append((match.lastgroup, match.group()))
        index = match.end()
    return out


def names_in(expr):
    """(metric names, label names) an expression refers to."""
    metrics, labels = set(), set()
    items = tokens(expr)
    index = 0
    while index < len(items):
        kind, text = items[index]
        following = items[index + 1][1] if index + 1 < len(items) else None
        if kind == "op" and text == "{":
            index += 1
            while index < len(items) and items[index][1] != "}":
                if items[index][0] == "ident" and index + 2 < len(items) and items[index + 1][1] in ("=", "!=", "=~", "!~"):
                    label, op, value = items[index][1], items[index + 1][1], items[index + 2]
                    if label == "__name__" and op == "=" and value[0] == "string":
                        metrics.add(value[1][1:-1])
                    else:
                        labels.add(label)
                    index += 3
                    continue
                index += 1
        elif kind == "ident" and text in GROUPING and following == "(":
            index += 2
            while index < len(items) and items[index][1] != ")":
                if items[index][0] == "ident":
                    labels.add(items[index][1])
                index += 1
        elif kind == "ident" and following != "(" and text not in KEYWORDS:
            metrics.add(text)
        index += 1
    return metrics, labels


def check_names(where, expr, registered, extra_labels=()):
    """Fails for unregistered metrics and unknown labels; returns the labels the expression's series can have."""
    try:
        metrics, labels = names_in(expr)
    except ValueError as error:
        fail(where, f"cannot read the expression: {error}")
        return set()
    allowed = set(TARGET_LABELS)
    for name in sorted(metrics):
        if name in PROMETHEUS_SERIES:
            continue
        if name in registered:
            allowed |= registered[name][1]
            continue
        base = next((name[:-len(s)] for s in HISTOGRAM_SUFFIXES if name.endswith(s)), None)
        if base in registered and registered[base][0] == "histogram":
            allowed |= registered[base][1] | ({"le"} if name.endswith("_bucket") else set())
            continue
        fail(where, f"metric {name} is not registered in Sources/ (renamed or removed?)")
    for label in sorted((labels | set(extra_labels)) - allowed):
        fail(where, f"label {label} is not a label of {', '.join(sorted(metrics)) or 'any metric'} (nor job, instance)")
    return allowed


def promtool(promtool_path, *args):
    return subprocess.run([promtool_path, *args], capture_output=True, text=True)


# --- Dashboard -------------------------------------------------------------------

def walk_panels(panels):
    for panel in panels:
        yield panel
        yield from walk_panels(panel.get("panels", []))


def datasource_refs(node, path="$"):
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "datasource":
                yield path + ".datasource", value
            yield from datasource_refs(value, f"{path}.{key}")
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from datasource_refs(value, f"{path}[{index}]")


def substitute(expr, variables):
    """Grafana variables replaced for a parse; None (after failing) for an unknown one."""
    unknown = []

    def replace(match):
        name = match.group(1) or match.group(2)
        if name in GRAFANA_BUILTINS:
            return GRAFANA_BUILTINS[name]
        if name in variables:
            return variables[name]
        unknown.append(name)
        return match.group()

    result = re.sub(r"\$\{([A-Za-z0-9_]+)(?::[^}]*)?\}|\$([A-Za-z0-9_]+)", replace, expr)
    return result, unknown


def check_dashboard(promtool_path, sources, path):
    registered = registered_metrics(sources)
    with open(path, encoding="utf-8") as f:
        dashboard = json.load(f)
    if not isinstance(dashboard.get("schemaVersion"), int) or dashboard["schemaVersion"] < 36:
        fail(path, f"schemaVersion {dashboard.get('schemaVersion')} must be >= 36")
    variables = dashboard.get("templating", {}).get("list", [])
    by_name = {v.get("name"): v for v in variables}
    source = by_name.get("datasource", {})
    if source.get("type") != "datasource" or source.get("query") != "prometheus":
        fail(path, "needs a variable datasource of type datasource with query prometheus")
    for where, value in datasource_refs(dashboard):
        uid = value.get("uid") if isinstance(value, dict) else value
        if uid not in ("${datasource}", "$datasource"):
            fail(path, f"{where} is {value!r}: every datasource must be ${{datasource}}, not a fixed uid")
    stand_ins = {}
    for variable in variables:
        name, kind = variable.get("name"), variable.get("type")
        if kind == "datasource":
            continue
        stand_ins[name] = "5m" if kind == "interval" else ".*"
        if kind == "query":
            query = variable.get("query")
            query = query.get("query") if isinstance(query, dict) else query
            match = re.fullmatch(r"\s*label_values\(\s*([A-Za-z_:][A-Za-z0-9_:]*)\s*,\s*([A-Za-z_][A-Za-z0-9_]*)\s*\)\s*", query or "")
            if not match:
                fail(path, f"variable {name}: query {query!r} is not label_values(metric, label)")
                continue
            check_names(f"{path} variable {name}", match.group(1), registered, extra_labels=[match.group(2)])

    rules, origin, ids, panel_count = [], {}, set(), 0
    for panel in walk_panels(dashboard.get("panels", [])):
        if panel.get("type") == "row":
            continue
        panel_count += 1
        title = panel.get("title", "")
        pid = panel.get("id")
        if pid in ids or not isinstance(pid, int):
            fail(path, f"panel {title!r}: id {pid!r} missing or not unique")
        ids.add(pid)
        if "gridPos" not in panel:
            fail(path, f"panel {title!r}: no gridPos")
        targets = [t for t in panel.get("targets", []) if not t.get("hide")]
        if not targets or not all(t.get("expr", "").strip() for t in targets):
            fail(path, f"panel {title!r}: every panel needs queries with an expr")
        for target in targets:
            where = f"{path} panel {pid} {title!r} query {target.get('refId')}"
            expr, unknown = substitute(target.get("expr", ""), stand_ins)
            if unknown:
                fail(where, f"unknown variable(s) {', '.join(sorted(set(unknown)))}")
                continue
            check_names(where, expr, registered)
            record = f"dashboard:panel_{pid}:{target.get('refId')}"
            origin[record] = where
            rules.append({"record": record, "expr": expr})

    with tempfile.TemporaryDirectory() as folder:
        rule_file = os.path.join(folder, "dashboard-queries.yml")
        with open(rule_file, "w") as f:
            yaml.safe_dump({"groups": [{"name": "dashboard", "rules": rules}]}, f, sort_keys=False, width=1000)
        result = promtool(promtool_path, "check", "rules", "--lint=none", rule_file)
        if result.returncode != 0:
            output = (result.stdout + result.stderr).strip()
            named = sorted({origin[r] for r in re.findall(r'"(dashboard:panel_[^"]+)"', output) if r in origin})
            fail(path, "promtool cannot parse " + ("; ".join(named) or "a query") + ":\n    " + output.replace("\n", "\n    "))
    if not failures:
        print(f"ok -- {path}: schemaVersion {dashboard['schemaVersion']}, {panel_count} panels, {len(rules)} queries parsed by promtool, "
              f"metrics and labels registered in {sources}/")


# --- Alerts ------------------------------------------------------------------------

def check_alerts(promtool_path, sources, rules_path, tests_path):
    registered = registered_metrics(sources)
    with open(rules_path, encoding="utf-8") as f:
        rules_doc = yaml.safe_load(f)
    alerts = []
    for group in rules_doc.get("groups", []):
        for rule in group.get("rules", []):
            name = rule.get("alert")
            where = f"{rules_path} {group.get('name')}/{name or rule.get('record')}"
            if not name:
                fail(where, "only alerting rules belong here")
                continue
            alerts.append(name)
            if "for" not in rule:
                fail(where, "needs for:")
            labels = rule.get("labels", {})
            if labels.get("severity") not in SEVERITIES:
                fail(where, f"labels.severity must be one of {', '.join(sorted(SEVERITIES))}")
            annotations = rule.get("annotations", {})
            for key in ("summary", "description"):
                if not str(annotations.get(key, "")).strip():
                    fail(where, f"needs annotations.{key}")
            allowed = check_names(where, rule.get("expr", ""), registered)
            _, grouped = names_in(rule.get("expr", ""))
            shown = set(re.findall(r"\$labels\.([A-Za-z_][A-Za-z0-9_]*)", " ".join(map(str, annotations.values()))))
            for label in sorted(shown - allowed):
                fail(where, f"annotations use $labels.{label}, not a label of the expression's series")
            for label in sorted((grouped | shown | set(labels)) & FORBIDDEN_ALERT_LABELS):
                fail(where, f"label {label} must not reach an alert")
    if len(set(alerts)) != len(alerts):
        fail(rules_path, "alert names must be unique")

    with open(tests_path, encoding="utf-8") as f:
        tests = yaml.safe_load(f)
    fired = {case.get("alertname") for test in tests.get("tests", []) for case in test.get("alert_rule_test", []) if case.get("exp_alerts")}
    for name in alerts:
        if name not in fired:
            fail(tests_path, f"no test fires {name}")
    with tempfile.TemporaryDirectory() as folder:
        for group in rules_doc.get("groups", []):
            for rule in group.get("rules", []):
                rule.pop("annotations", None)
        with open(os.path.join(folder, "rules.yml"), "w") as f:
            yaml.safe_dump(rules_doc, f, sort_keys=False, width=1000)
        tests["rule_files"] = ["rules.yml"]
        with open(os.path.join(folder, "tests.yml"), "w") as f:
            yaml.safe_dump(tests, f, sort_keys=False, width=1000)
        result = promtool(promtool_path, "test", "rules", os.path.join(folder, "tests.yml"))
        if result.returncode != 0:
            fail(tests_path, "promtool test rules failed:\n    " + (result.stdout + result.stderr).strip().replace("\n", "\n    "))
    if not failures:
        print(f"ok -- {rules_path}: {len(alerts)} alerts with for, severity, summary, description; metrics and labels registered "
              f"in {sources}/; {len(tests.get('tests', []))} promtool tests in {tests_path} pass and fire every alert")


def main(argv):
    if len(argv) < 2 or (argv[1], len(argv)) not in (("dashboard", 5), ("alerts", 6)):
        print(__doc__, file=sys.stderr)
        return 2
    if argv[1] == "dashboard":
        check_dashboard(*argv[2:])
    else:
        check_alerts(*argv[2:])
    for failure in failures:
        print(f"FAIL {failure}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
