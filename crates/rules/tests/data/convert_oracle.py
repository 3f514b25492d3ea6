#!/usr/bin/env python3
"""Converts the OpenSpiel rules oracle (shared/oracle/) into the compact test data here.

Run from the repository root with the oracle folder as argument:
    python3 crates/rules/tests/data/convert_oracle.py ../shared/oracle
The output files are committed; the tests never need the oracle folder itself.
"""
import json, sys, os

ORACLE = sys.argv[1]
OUT = os.path.dirname(os.path.abspath(__file__))
LOA_GAMES = 100          # of 200 random LOA games
EDGE_OPPONENT_ONLY = 1500  # of 5,531 "the mover's capture connects the opponent" cases

def position_string(board, stm, n):
    ranks = []
    for r in range(n):
        row, run, out = board[r * n:(r + 1) * n], 0, ""
        for c in row:
            if c == ".":
                run += 1
            else:
                if run:
                    out += str(run)
                    run = 0
                out += c
        if run:
            out += str(run)
        ranks.append(out)
    return "/".join(ranks) + " " + stm

def square_index(sq, n):  # index into the flat oracle board string
    file, rank = ord(sq[0]) - 97, int(sq[1:])
    return (n - rank) * n + file

def split_loa(m):  # "b1b3" -> ("b1", "b3")
    i = 2 if m[2].isalpha() else 3
    return m[:i], m[i:]

def loa_move(board, stm, m):
    a, b = split_loa(m)
    target = board[square_index(b, 8)]
    return f"{a}{'x' if target not in '.' + stm else '-'}{b}"

def fnv(moves):
    h = 0xcbf29ce484222325
    for byte in "\n".join(sorted(moves)).encode():
        h = ((h ^ byte) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return f"{h:016x}"

def perft_files():
    for game, files in (("loa", ["loa.json"]), ("amazons", ["amazons.json", "amazons_extra.json"])):
        n = 8 if game == "loa" else 10
        seen, out = set(), []
        for f in files:
            for p in json.load(open(os.path.join(ORACLE, "perft_results", f)))["positions"]:
                key = (p["board"], p["stm"])
                depths = [(r["depth"], r["perft"]) for r in p["results"]]
                if key in seen:
                    continue
                seen.add(key)
                out.append(f"id {p['name']}")
                out.append(f"position {position_string(p['board'], p['stm'], n)}")
                out += [f"perft {d} {v}" for d, v in depths]
                out.append("")
        open(os.path.join(OUT, f"{game}.perft"), "w").write("\n".join(out))

def loa_playouts():
    out = ["# OpenSpiel random LOA games: position, move count, FNV-1a digest of the sorted",
           "# legal moves in our notation, the move played; 'end' gives the oracle's verdict."]
    for line in open(os.path.join(ORACLE, "loa_playouts.jsonl")):
        x = json.loads(line)
        if x["g"] >= LOA_GAMES:
            break
        if x["ply"] == 0:
            out.append(f"game {x['g']} seed {x['seed']}")
        pos = position_string(x["board"], x["stm"], 8)
        end = x.get("end")
        moves = x["moves"]
        if end and end["os_reason"] == "repetition":
            moves = end["ours"]["moves"]  # our rules go on; OpenSpiel stopped (None: not copied)
        if moves is None:
            out.append(f"{pos}\t?\t?\t-")
        else:
            ours = [loa_move(x["board"], x["stm"], m) for m in moves]
            if not ours and not end:
                ours = ["pass"]
            out.append(f"{pos}\t{len(ours)}\t{fnv(ours)}\t{x['played'] and loa_move(x['board'], x['stm'], x['played']) or '-'}")
        if end:
            o = end["ours"]
            if end["os_reason"] == "connection":
                out.append(f"end connection mover-wins={o['result_mover_wins']} draw={o['result_draw_option']}")
            elif end["os_reason"] == "repetition":
                out.append(f"end repetition occurrence={o['occurrence']}")
            else:
                out.append(f"end {end['os_reason'].replace('_', '-')}")
    open(os.path.join(OUT, "loa_playouts.txt"), "w").write("\n".join(out) + "\n")

def amazons_playouts():
    out = ["# OpenSpiel random Amazons games: position, turn count, FNV-1a digest of the sorted",
           "# turns, turns per amazon, the turn played; 'end' gives the oracle's verdict."]
    for line in open(os.path.join(ORACLE, "amazons_playouts.jsonl")):
        x = json.loads(line)
        if x["ply"] == 0:
            out.append(f"game {x['g']} seed {x['seed']}")
        pos = position_string(x["board"], x["stm"], 10)
        by_from = ",".join(f"{k}:{v}" for k, v in sorted(x["n_by_from"].items()))
        out.append(f"{pos}\t{x['n']}\t{x['digest']}\t{by_from}\t{x['played'] or '-'}")
        if "end" in x:
            out.append(f"end no-moves winner={x['end']['ours']['winner']}")
    open(os.path.join(OUT, "amazons_playouts.txt"), "w").write("\n".join(out) + "\n")

def loa_edge_cases():
    out = ["# OpenSpiel-judged LOA moves that end the game by connection: category, position,",
           "# move, position after, winner under double-connection=mover-wins, under =draw."]
    opponent_only = 0
    for line in open(os.path.join(ORACLE, "loa_edge_cases.jsonl")):
        x = json.loads(line)
        if x["category"] == "opponent_only":
            opponent_only += 1
            if opponent_only > EDGE_OPPONENT_ONLY:
                continue
        after_stm = "w" if x["stm"] == "b" else "b"
        out.append("\t".join([x["category"], position_string(x["board"], x["stm"], 8),
                              loa_move(x["board"], x["stm"], x["move"]),
                              position_string(x["board_after"], after_stm, 8),
                              x["ours_result_mover_wins_option"], x["ours_result_draw_option"]]))
    open(os.path.join(OUT, "loa_edge_cases.txt"), "w").write("\n".join(out) + "\n")

perft_files()
loa_playouts()
amazons_playouts()
loa_edge_cases()
