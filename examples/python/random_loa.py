#!/usr/bin/env python3
"""A minimal Lines of Action engine for tourney: it plays a random legal move.

It speaks tourney's protocol, or UGI or UCI with `--protocol ugi|uci`, and shows the least
an engine must do: answer the handshake and `isready`, follow `position`, answer `go` with
a legal `bestmove` (a `pass` when it has no step, `none` when the game is over) and end on
`quit`. Replace `choose` with a search to make it play well.

    tourney check-engine "python3 examples/python/random_loa.py" --protocol tourney
"""

import random
import sys

START = "1bbbbbb1/w6w/w6w/w6w/w6w/w6w/w6w/1bbbbbb1 b"
LINES = [(1, 0), (0, 1), (1, 1), (1, -1)]
AROUND = [(df, dr) for df in (-1, 0, 1) for dr in (-1, 0, 1) if df or dr]


def parse(text):
    """A position string: the board as {(file, rank): 'b' or 'w'} and the side to move."""
    rows, turn = text.split()
    board = {}
    for row_from_top, row in enumerate(rows.split("/")):
        file = 0
        for c in row:
            if c.isdigit():
                file += int(c)
            else:
                board[(file, 7 - row_from_top)] = c
                file += 1
    return board, turn


def name(square):
    return "abcdefgh"[square[0]] + str(square[1] + 1)


def square(text):
    return ("abcdefgh".index(text[0]), int(text[1:]) - 1)


def steps(board, turn):
    """Every legal step of `turn`, in tourney's notation (`b1-b3`, `d4xf6`)."""
    out = []
    for (f, r), piece in list(board.items()):
        if piece != turn:
            continue
        for df, dr in LINES:
            # A piece moves as many squares as there are pieces on its line.
            n = sum((f + k * df, r + k * dr) in board for k in range(-7, 8))
            for s in (1, -1):
                to = (f + s * n * df, r + s * n * dr)
                if not (0 <= to[0] < 8 and 0 <= to[1] < 8) or board.get(to) == turn:
                    continue
                between = [(f + s * k * df, r + s * k * dr) for k in range(1, n)]
                if any(board.get(p, turn) != turn for p in between):
                    continue  # it may jump its own pieces, not the opponent's
                out.append(name((f, r)) + ("x" if to in board else "-") + name(to))
    return out


def connected(board, side):
    pieces = {p for p, c in board.items() if c == side}
    if not pieces:
        return True
    seen, todo = set(), [next(iter(pieces))]
    while todo:
        f, r = todo.pop()
        if (f, r) in seen:
            continue
        seen.add((f, r))
        todo += [(f + df, r + dr) for df, dr in AROUND if (f + df, r + dr) in pieces]
    return seen == pieces


def play(board, turn, move):
    if move != "pass":
        # `b1-b3`, `b1xb3` and UCI's `b1b3` name the same step.
        board[square(move[-2:])] = board.pop(square(move[:2]))
    return "w" if turn == "b" else "b"


def choose(board, turn):
    if connected(board, "b") or connected(board, "w"):
        return None
    return random.choice(steps(board, turn) or ["pass"])


def main():
    protocol = sys.argv[sys.argv.index("--protocol") + 1] if "--protocol" in sys.argv else "tourney"
    board, turn = parse(START)
    for line in sys.stdin:
        words = line.split()
        if not words:
            continue
        command = words[0]
        if command in ("ugi", "uci"):
            print("id name random_loa.py\nid author the tourney examples")
            print("uciok" if protocol == "uci" else "ugiok")
        elif command == "isready":
            print("readyok")
        elif command == "position":
            rest = words[1:]
            if rest[0] == "fen":
                rest = rest[1:]
            if rest[0] == "startpos":
                board, turn = parse(START)
                rest = rest[1:]
            else:
                board, turn = parse(" ".join(rest[:2]))
                rest = rest[2:]
            for move in rest[1:] if rest[:1] == ["moves"] else []:
                turn = play(board, turn, move)
        elif command == "go":
            move = choose(board, turn)
            if move is None:
                print("bestmove (none)" if protocol == "uci" else "bestmove none")
            elif protocol == "uci":
                print("bestmove " + move.replace("-", "").replace("x", ""))
            else:
                print("bestmove " + move)
        elif command == "query" and len(words) > 1:
            over = connected(board, "b") or connected(board, "w")
            print("response " + {"gameover": str(over).lower(), "p1turn": str(turn == "b").lower()}.get(words[1], "none"))
        elif command == "quit":
            return
        sys.stdout.flush()


if __name__ == "__main__":
    main()
