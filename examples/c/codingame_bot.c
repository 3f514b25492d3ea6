/* A minimal CodinGame bot for LOA and Amazons, as tourney's `codingame` protocol runs it
 * (the site's input, unchanged): it plays a random move from the list each turn gives.
 *
 *   cc -O2 -o codingame_bot examples/c/codingame_bot.c
 *   tourney check-engine "./codingame_bot loa" --protocol codingame --game loa
 *
 * Initial input: the board size, then (LOA only) the bot's colour. Each turn: (Amazons
 * only) the bot's colour, the rows top to bottom, the opponent's last move ("null" at
 * first), the number of legal moves and each move. A real bot would read the rows and
 * search; this one only shows the input and output. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static char line[256];

/* The next input line without its newline; exits at the end of the input. */
static char *next(void) {
    if (!fgets(line, sizeof line, stdin)) exit(0);
    line[strcspn(line, "\r\n")] = 0;
    return line;
}

int main(int argc, char **argv) {
    int amazons = argc > 1 && strcmp(argv[1], "amazons") == 0;
    static char moves[4096][16];
    srand((unsigned)time(NULL));
    int size = atoi(next());
    if (!amazons) next(); /* LOA: the colour, once */
    for (;;) {
        if (amazons) next(); /* Amazons: the colour, every turn */
        for (int row = 0; row < size; row++) next();
        next(); /* the opponent's last move */
        int count = atoi(next());
        for (int i = 0; i < count; i++) {
            char *move = next();
            if (i < 4096) snprintf(moves[i], sizeof moves[i], "%.15s", move);
        }
        int n = count < 4096 ? count : 4096;
        printf("%s\n", n > 0 ? moves[rand() % n] : "pass");
        fflush(stdout);
    }
}
