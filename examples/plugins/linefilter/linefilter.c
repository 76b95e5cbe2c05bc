/* linefilter: {"text": "...", "contains": "..."} -> {"lines": [...], "count": n}:
 * the lines of `text` that contain `contains`. */
#include "../plugin_io.h"

int main(void) {
    char *args = read_stdin(NULL);
    char *text = json_string(args, "text");
    char *needle = json_string(args, "contains");
    if (!text || !needle) {
        puts("{\"error\": \"arguments 'text' and 'contains' (strings) are required\"}");
        return 0;
    }
    long count = 0;
    fputs("{\"lines\": [", stdout);
    for (char *line = text; line && *line;) {
        char *end = strchr(line, '\n');
        if (end) *end = '\0';
        if (strstr(line, needle)) {
            if (count++) fputs(", ", stdout);
            put_json_string(line);
        }
        line = end ? end + 1 : NULL;
    }
    printf("], \"count\": %ld}\n", count);
    return 0;
}
