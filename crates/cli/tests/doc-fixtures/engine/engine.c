/* The docs' example engine, as `make -j` builds it: registered and built, never played. */
#include <stdio.h>

int main(void) {
    puts("id name engine");
    return 0;
}
