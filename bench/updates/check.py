"""Validate bench/updates/memories.jsonl and questions.jsonl.

Errors make the script exit with status 1. Warnings are printed but allowed.
Run: python3 bench/updates/check.py
"""
import json
import os
import re
import sys
from collections import Counter, defaultdict
from datetime import datetime

HERE = os.path.dirname(os.path.abspath(__file__))
errors, warnings = [], []


def err(msg):
    errors.append(msg)


def ts(s):
    if not re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", s or ""):
        raise ValueError(s)
    return datetime.strptime(s, "%Y-%m-%dT%H:%M:%SZ")


def load(name):
    rows = []
    with open(os.path.join(HERE, name), encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                err(f"{name}:{n}: empty line")
                continue
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as e:
                err(f"{name}:{n}: bad JSON: {e}")
    return rows


def has_all(text, keywords):
    t = text.lower()
    return all(k.lower() in t for k in keywords)


mems = load("memories.jsonl")
qs = load("questions.jsonl")

# ---- memories
MEM_KEYS = {"person", "id", "content", "created_at", "role"}
by_id, by_person = {}, defaultdict(list)
for m in mems:
    if set(m) != MEM_KEYS:
        err(f"memory {m.get('id')}: fields {sorted(m)} != {sorted(MEM_KEYS)}")
        continue
    if m["id"] in by_id:
        err(f"duplicate memory id {m['id']}")
    if not re.fullmatch(re.escape(m["person"]) + r"-\d{3}", m["id"]):
        err(f"memory id {m['id']} does not match person {m['person']}")
    if m["role"] not in ("user", "assistant"):
        err(f"{m['id']}: role {m['role']!r}")
    if not m["content"].strip():
        err(f"{m['id']}: empty content")
    try:
        m["_t"] = ts(m["created_at"])
    except ValueError:
        err(f"{m['id']}: bad created_at {m['created_at']!r}")
        m["_t"] = None
    by_id[m["id"]] = m
    by_person[m["person"]].append(m)

for p, ms in by_person.items():
    nums = [int(m["id"].rsplit("-", 1)[1]) for m in ms]
    if nums != list(range(1, len(ms) + 1)):
        err(f"{p}: ids are not numbered 1..{len(ms)} in file order")
    times = [m["_t"] for m in ms]
    if None not in times:
        for a, b in zip(ms, ms[1:], strict=False):
            if not a["_t"] < b["_t"]:
                err(f"{p}: {b['id']} ({b['created_at']}) is not after {a['id']} ({a['created_at']})")
        dates = [m["created_at"][:10] for m in ms]
        if len(set(dates)) != len(dates):
            err(f"{p}: two memories share a date")
    if not 50 <= len(ms) <= 80:
        warnings.append(f"{p}: {len(ms)} memories (brief asks 50-80)")

# ---- questions
Q_KEYS = {"person", "language", "question", "attribute", "subject", "current", "history",
          "current_ids", "stale_ids", "distractor_ids", "as_of", "kind"}
for i, q in enumerate(qs, 1):
    tag = f"question {i} ({q.get('person')}: {q.get('question')!r})"
    keys = set(q)
    extra = keys - Q_KEYS - {"answer_ids"}
    if Q_KEYS - keys or extra:
        err(f"{tag}: missing {sorted(Q_KEYS - keys)} extra {sorted(extra)}")
        continue
    p = q["person"]
    if p not in by_person:
        err(f"{tag}: unknown person")
        continue
    if q["kind"] not in ("current", "history", "none"):
        err(f"{tag}: kind {q['kind']!r}")
    if q["language"] not in ("en", "zh"):
        err(f"{tag}: language {q['language']!r}")
    if not q["subject"]:
        err(f"{tag}: empty subject")
    try:
        as_of = ts(q["as_of"])
        last = max(m["_t"] for m in by_person[p] if m["_t"])
        if not as_of > last:
            err(f"{tag}: as_of {q['as_of']} is not after the person's last memory")
    except ValueError:
        err(f"{tag}: bad as_of {q['as_of']!r}")
    lists = {k: q[k] for k in ("current_ids", "stale_ids", "distractor_ids")}
    if "answer_ids" in q:
        lists["answer_ids"] = q["answer_ids"]
    ok = True
    for name, ids in lists.items():
        if len(set(ids)) != len(ids):
            err(f"{tag}: duplicate ids in {name}")
        for mid in ids:
            if mid not in by_id:
                err(f"{tag}: {name} has unknown id {mid}")
                ok = False
            elif by_id[mid]["person"] != p:
                err(f"{tag}: {name} id {mid} belongs to {by_id[mid]['person']}")
                ok = False
    if not ok:
        continue
    cur, stale, dis = set(q["current_ids"]), set(q["stale_ids"]), set(q["distractor_ids"])
    for a, b, x in (("current_ids", "stale_ids", cur & stale), ("current_ids", "distractor_ids", cur & dis),
                    ("stale_ids", "distractor_ids", stale & dis)):
        if x:
            err(f"{tag}: {sorted(x)} in both {a} and {b}")
    for mid in cur | stale:
        if by_id[mid]["role"] != "user":
            err(f"{tag}: assistant memory {mid} in current_ids/stale_ids")
    if cur and stale:
        newest_stale = max(by_id[m]["_t"] for m in stale)
        oldest_cur = min(by_id[m]["_t"] for m in cur)
        if not oldest_cur > newest_stale:
            err(f"{tag}: a current memory is not newer than every stale memory")
    kw = q["current"]
    if q["kind"] == "none":
        if cur or stale or kw or q["history"] or q.get("answer_ids"):
            err(f"{tag}: kind none must have empty current, history, current_ids, stale_ids")
        if not dis:
            err(f"{tag}: kind none without distractors")
        continue
    if not kw or not cur:
        err(f"{tag}: needs current keywords and current_ids")
        continue
    if not q["history"]:
        err(f"{tag}: empty history")
    if q["kind"] == "current":
        if "answer_ids" in q:
            err(f"{tag}: answer_ids only for history questions")
        for mid in cur:
            if not has_all(by_id[mid]["content"], kw):
                err(f"{tag}: current memory {mid} lacks keywords {kw}")
        for mid in stale:
            if has_all(by_id[mid]["content"], kw):
                warnings.append(f"{tag}: stale memory {mid} also holds {kw}")
    else:  # history
        ans = set(q.get("answer_ids", []))
        if not ans:
            err(f"{tag}: history question without answer_ids")
        elif not ans <= stale:
            err(f"{tag}: answer_ids must be stale memories")
        for mid in ans:
            if not has_all(by_id[mid]["content"], kw):
                err(f"{tag}: answer memory {mid} lacks keywords {kw}")
    if not any(has_all(m["content"], kw) for m in by_person[p]):
        err(f"{tag}: no memory holds {kw}")

# ---- summary
print(f"{len(mems)} memories of {len(by_person)} people; {len(qs)} questions")
print("memories per person:", {p: len(ms) for p, ms in sorted(by_person.items())})
print("roles:", dict(Counter(m["role"] for m in mems)))
print("questions by kind:", dict(Counter(q.get("kind") for q in qs)))
print("questions by language:", dict(Counter(q.get("language") for q in qs)))
print("questions about third persons:", sum(1 for q in qs if q.get("subject") != "self"))
for w in warnings:
    print("warning:", w)
for e in errors:
    print("ERROR:", e)
print(f"{len(errors)} errors, {len(warnings)} warnings")
sys.exit(1 if errors else 0)
