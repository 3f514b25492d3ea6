#!/usr/bin/env python3
"""A minimal Amazons program for tourney's GTP dialect: it plays a random legal turn.

A turn is three GTP moves of one colour: the amazon, where it goes, where its arrow lands
(`genmove b` three times; the opponent's turn comes as three `play w ...`). GTP's black
moves first, from the bottom (a4 d1 g1 j4 on 10×10; a3 c1 f1 h3 on 8×8). Vertices skip
the letter I. Every answer is `= text` or `? error`, then an empty line.

    tourney check-engine "python3 examples/python/gtp_amazons.py" --protocol gtp --game amazons
"""

import random
import sys

COLUMNS = "ABCDEFGHJKLMNOPQRSTUVWXYZ"
QUEEN = [(df, dr) for df in (-1, 0, 1) for dr in (-1, 0, 1) if df or dr]
COMMANDS = ["protocol_version", "name", "version", "known_command", "list_commands", "boardsize",
            "clear_board", "komi", "play", "genmove", "time_settings", "time_left", "quit"]


class Board:
    def __init__(self, size):
        self.size, k, top = size, (size - 1) // 3, size - 1
        self.cells = {}
        for f, r in [(0, k), (k, 0), (top - k, 0), (top, k)]:
            self.cells[(f, r)] = "b"
        for f, r in [(0, top - k), (k, top), (top - k, top), (top, top - k)]:
            self.cells[(f, r)] = "w"

    def reach(self, f, r):
        """The empty squares a queen on (f, r) reaches."""
        out = []
        for df, dr in QUEEN:
            x, y = f + df, r + dr
            while 0 <= x < self.size and 0 <= y < self.size and (x, y) not in self.cells:
                out.append((x, y))
                x, y = x + df, y + dr
        return out

    def turns(self, colour):
        out = []
        for start, piece in list(self.cells.items()):
            if piece != colour:
                continue
            del self.cells[start]  # the square it leaves is free for its arrow
            for to in self.reach(*start):
                out += [(start, to, arrow) for arrow in self.reach(*to) if arrow != to]
            self.cells[start] = colour
        return out

    def play(self, colour, turn):
        start, to, arrow = turn
        del self.cells[start]
        self.cells[to], self.cells[arrow] = colour, "x"


def vertex(square):
    return COLUMNS[square[0]] + str(square[1] + 1)


def square(text, size):
    try:
        f, r = COLUMNS.index(text[0].upper()), int(text[1:]) - 1
    except (ValueError, IndexError):
        return None
    return (f, r) if 0 <= f < size and 0 <= r < size else None


def main():
    board, told, to_give = Board(10), [], []
    for line in sys.stdin:
        words = line.split()
        if not words or words[0].startswith("#"):
            continue
        command, args = words[0], words[1:]
        ok, text = True, ""
        if command == "protocol_version":
            text = "2"
        elif command == "name":
            text = "gtp_amazons.py"
        elif command == "version":
            text = "1"
        elif command == "known_command":
            text = str(args[:1] and args[0] in COMMANDS).lower()
        elif command == "list_commands":
            text = "\n".join(COMMANDS)
        elif command == "boardsize":
            ok = args in (["8"], ["10"])
            board, text = (Board(int(args[0])), "") if ok else (board, "unacceptable size")
        elif command == "clear_board":
            board, told, to_give = Board(board.size), [], []
        elif command == "play":
            at = square(args[1], board.size) if len(args) == 2 else None
            ok, text = at is not None, "" if at else "invalid coordinate"
            if ok:
                told.append(at)
                if len(told) == 3:
                    board.play(args[0][0].lower(), tuple(told))
                    told = []
        elif command == "genmove":
            if not to_give:
                turns = board.turns(args[0][0].lower())
                if not turns:
                    text = "resign"
                else:
                    turn = random.choice(turns)
                    board.play(args[0][0].lower(), turn)
                    to_give = list(turn)
            if to_give:
                text = vertex(to_give.pop(0))
        elif command not in ("komi", "time_settings", "time_left", "quit"):
            ok, text = False, "unknown command"
        print(("= " if ok else "? ") + text + "\n", flush=True)
        if command == "quit":
            return


if __name__ == "__main__":
    main()
