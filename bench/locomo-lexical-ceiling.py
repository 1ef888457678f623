#!/usr/bin/env python3
"""How far lexical retrieval goes on LoCoMo: the measurements behind issue #13's quality goals.

    /usr/bin/python3 bench/locomo-lexical-ceiling.py [path/to/locomo.json]   (needs python3-nltk, python3-numpy)

Same units, tokens and metrics as shared/tools/locomo-baseline (BM25 with Porter stems over 3-turn
windows, categories 1-4, session_hit@1/@5 by first appearance of a session, evidence_recall@2k),
then the signals a lexical or hashing retriever could add, one at a time:
  session    + w x the window's session BM25 (normalised): "the whole conversation is about it"
  speaker    term frequency of turns by the person the question names x 1, by the other x g
  turn       + w x the best single-turn BM25 inside the window
  prf        RM3-style pseudo-relevance feedback: top-k windows' best terms added to the query
  cosine     + w x exact tf-idf cosine (the best a hashing embedder can approach), RRF-fused
Prints one line per setting: overall hit@1 / hit@5 / recall@2k, then per category hit@1/hit@5.
Nothing here is tuned to the data's wording; it asks whether any such signal moves hit@1 from
~0.72 toward 0.80. Reads the data from its path (CC BY-NC: never copied into the repository).
"""
import json, math, re, sys
from collections import Counter, defaultdict

import numpy as np
from nltk.stem import PorterStemmer

stem = PorterStemmer().stem
STOP = set("the a an of to in on and or is was were be been are i you he she it we they my your his her their what when where who how did do does with for at by from that this as has have had about would which there".split())
cache = {}


def terms(s):
    out = []
    for t in re.findall(r"[a-z0-9]+", s.lower()):
        if t in STOP:
            continue
        if t not in cache:
            cache[t] = stem(t)
        out.append(cache[t])
    return out


class BM25:
    def __init__(self, docs, k1=1.2, b=0.75):
        self.docs = [Counter(d) for d in docs]
        self.len = [sum(d.values()) for d in self.docs]
        self.avg = sum(self.len) / max(1, len(self.len))
        n = len(self.docs)
        df = Counter()
        for d in self.docs:
            df.update(d.keys())
        self.idf = {w: math.log(1 + (n - c + 0.5) / (c + 0.5)) for w, c in df.items()}
        self.k1, self.b = k1, b

    def score_counts(self, i, tf, q):
        s = 0.0
        for w, qw in q.items():
            idf, x = self.idf.get(w), tf.get(w, 0)
            if idf and x:
                s += qw * idf * x * (self.k1 + 1) / (x + self.k1 * (1 - self.b + self.b * self.len[i] / self.avg))
        return s

    def scores(self, q):
        weights = q if isinstance(q, dict) else Counter({w: 1.0 for w in set(q)})
        return np.array([self.score_counts(i, d, weights) for i, d in enumerate(self.docs)])


def norm(a):
    m = a.max() if len(a) else 0
    return a / m if m > 0 else a


def ranks(a):
    r = np.empty(len(a))
    r[np.argsort(-a, kind="stable")] = np.arange(1, len(a) + 1)
    return r


def evaluate(data, cfg):
    res, cnt = defaultdict(Counter), Counter()
    for s in data:
        conv = s["conversation"]
        names = [conv["speaker_a"], conv["speaker_b"]]
        win, sess, turn_texts = [], {}, []
        for key, turns in conv.items():
            m = re.fullmatch(r"session_(\d+)", key)
            if not m:
                continue
            sid = m.group(1)
            date = conv.get(f"session_{sid}_date_time", "")
            txt = [t["speaker"] + ": " + t["text"] + " " + t.get("blip_caption", "") for t in turns]
            ids = [t["dia_id"] for t in turns]
            sess[sid] = date + " " + " ".join(txt)
            base = len(turn_texts)
            turn_texts += [date + " " + x for x in txt]
            for j in range(len(turns)):
                lo, hi = max(0, j - 1), min(len(turns), j + 2)
                parts = [(turns[x]["speaker"], Counter(terms(txt[x]))) for x in range(lo, hi)]
                win.append((sid, ids[lo:hi], date + " " + " ".join(txt[lo:hi]), parts, Counter(terms(date)), range(base + lo, base + hi)))
        W = BM25([terms(u[2]) for u in win])
        sids = list(sess)
        S = BM25([terms(sess[x]) for x in sids])
        T = BM25([terms(t) for t in turn_texts]) if cfg.get("turn") else None
        sidx = {x: i for i, x in enumerate(sids)}
        if cfg.get("cosine"):
            vocab = {w: i for i, w in enumerate(W.idf)}
            M = np.zeros((len(win), len(vocab)), dtype=np.float32)
            for i, d in enumerate(W.docs):
                for w, tf in d.items():
                    M[i, vocab[w]] = 1 + math.log(tf)
            M /= np.linalg.norm(M, axis=1, keepdims=True) + 1e-9
        for q in s["qa"]:
            cat = q["category"]
            if cat == 5:
                continue
            gold = set(x.strip() for e in q["evidence"] for x in re.split(r"[;,]", e) if re.fullmatch(r"D\d+:\d+", x.strip()))
            ev = {g.split(":")[0][1:] for g in gold}
            if not ev:
                continue
            qt = terms(q["question"])
            named = [n for n in names if n.lower() in re.findall(r"[a-z0-9]+", q["question"].lower())]
            if cfg.get("speaker") is not None and len(named) == 1:
                g = cfg["speaker"]
                sc = np.zeros(len(win))
                for i, u in enumerate(win):
                    tf = Counter()
                    for spk, c in u[3]:
                        for t, v in c.items():
                            tf[t] += (1.0 if spk == named[0] else g) * v
                    tf.update(u[4])
                    sc[i] = W.score_counts(i, tf, Counter({w: 1.0 for w in set(qt)}))
            else:
                sc = W.scores(qt)
            if cfg.get("prf"):
                fb = Counter()
                for i in np.argsort(-sc)[: cfg["prf"]]:
                    for w, tf in W.docs[i].items():
                        fb[w] += tf / W.len[i] * W.idf.get(w, 0)
                best = fb.most_common(10)
                wq = Counter({w: 1.0 for w in set(qt)})
                for w, v in best:
                    wq[w] += 0.3 * v / best[0][1]
                sc = W.scores(wq)
            total = norm(sc)
            if cfg.get("session"):
                ss = norm(S.scores(qt))
                total = total + cfg["session"] * np.array([ss[sidx[u[0]]] for u in win])
            if cfg.get("turn"):
                ts = norm(T.scores(qt))
                total = total + cfg["turn"] * np.array([max(ts[i] for i in u[5]) for u in win])
            if cfg.get("cosine"):
                qv = np.zeros(len(vocab), dtype=np.float32)
                for w in set(qt):
                    if w in vocab:
                        qv[vocab[w]] = W.idf[w]
                total = 1 / (20 + ranks(total)) + cfg["cosine"] / (20 + ranks(M @ qv))
            order = np.argsort(-total, kind="stable")
            seen, tokens, covered = [], 0, set()
            for i in order:
                if win[i][0] not in seen:
                    seen.append(win[i][0])
                w = math.floor(len(win[i][2].split()) * 4 / 3)
                if tokens + w <= 2000 or tokens == 0:
                    tokens += w
                    covered |= set(win[i][1]) & gold
                if len(seen) >= 5 and tokens > 1900:
                    break
            for k in ("all", cat):
                res[k]["h1"] += 1 if ev & set(seen[:1]) else 0
                res[k]["h5"] += 1 if ev & set(seen[:5]) else 0
                res[k]["r2k"] += len(covered) / len(gold)
                cnt[k] += 1
    return {k: {m: v / cnt[k] for m, v in c.items()} for k, c in res.items()}


SETTINGS = [
    ("windows (the baseline)", {}),
    ("+ session 0.3", {"session": 0.3}),
    ("+ session 0.5", {"session": 0.5}),
    ("speaker g=0.5", {"speaker": 0.5}),
    ("speaker g=0.3", {"speaker": 0.3}),
    ("+ turn 0.3", {"turn": 0.3}),
    ("prf top-5", {"prf": 5}),
    ("+ cosine 0.5 (RRF)", {"cosine": 0.5}),
    ("+ session 0.3 + cosine 0.3", {"session": 0.3, "cosine": 0.3}),
]

if __name__ == "__main__":
    data = json.load(open(sys.argv[1] if len(sys.argv) > 1 else "../shared/data/locomo-dev/locomo-dev.json"))
    print(f"{'setting':32} {'hit@1':>6} {'hit@5':>6} {'r@2k':>6}   per category hit@1/hit@5 (1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop)")
    for name, cfg in SETTINGS:
        o = evaluate(data, cfg)
        a = o["all"]
        cats = "  ".join(f"{c}:{o[c]['h1']:.3f}/{o[c]['h5']:.3f}" for c in (1, 2, 3, 4) if c in o)
        print(f"{name:32} {a['h1']:6.3f} {a['h5']:6.3f} {a['r2k']:6.3f}   {cats}")
