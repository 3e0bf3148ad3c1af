/* Builds one output line in pieces and prints it with a single write, so
 * that mpiexec's per-write rank labels never split a line. */
#ifndef LINE_H
#define LINE_H
#include <stdarg.h>
#include <stdio.h>

static char line_buffer[8192];
static int line_length;

static void add(const char *format, ...) {
    va_list args;
    va_start(args, format);
    int n = vsnprintf(line_buffer + line_length, sizeof line_buffer - line_length, format, args);
    va_end(args);
    if (n > 0) line_length += n;
    if (line_length >= (int)sizeof line_buffer) line_length = sizeof line_buffer - 1;
}

static void end_line(void) {
    printf("%s\n", line_buffer);
    fflush(stdout);
    line_length = 0;
    line_buffer[0] = 0;
}
/* Prints one whole line. */
#define say(...)              \
    do {                      \
        add(__VA_ARGS__);     \
        end_line();           \
    } while (0)
#endif
