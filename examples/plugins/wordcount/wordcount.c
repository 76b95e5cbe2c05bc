/* wordcount: {"text": "..."} -> {"words": n, "lines": n, "chars": n} */
#include "../plugin_io.h"

int main(void) {
    char *args = read_stdin(NULL);
    char *text = json_string(args, "text");
    if (!text) { puts("{\"error\": \"argument 'text' (a string) is required\"}"); return 0; }
    long words = 0, lines = 0, chars = 0;
    int in_word = 0;
    for (const char *c = text; *c; c++) {
        chars++;
        if (*c == '\n') lines++;
        if (*c == ' ' || *c == '\n' || *c == '\t' || *c == '\r') in_word = 0;
        else if (!in_word) { in_word = 1; words++; }
    }
    if (chars > 0 && text[chars - 1] != '\n') lines++;
    printf("{\"words\": %ld, \"lines\": %ld, \"chars\": %ld}\n", words, lines, chars);
    return 0;
}
