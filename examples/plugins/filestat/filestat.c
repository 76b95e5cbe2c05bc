/* filestat: {"path": "..."} -> {"path": "...", "bytes": n, "lines": n}, for a file in the
 * workspace (preopened read-only at /workspace; the descriptor asks for "workspace": "read"). */
#include "../plugin_io.h"

int main(void) {
    char *args = read_stdin(NULL);
    char *path = json_string(args, "path");
    if (!path) { puts("{\"error\": \"argument 'path' (a string) is required\"}"); return 0; }
    char full[4096];
    snprintf(full, sizeof full, "/workspace/%s", path);
    FILE *file = fopen(full, "rb");
    if (!file) {
        fputs("{\"error\": ", stdout);
        put_json_string("cannot open the file (is the workspace preopened?)");
        puts("}");
        return 0;
    }
    long bytes = 0, lines = 0;
    int c;
    while ((c = fgetc(file)) != EOF) { bytes++; if (c == '\n') lines++; }
    fclose(file);
    fputs("{\"path\": ", stdout);
    put_json_string(path);
    printf(", \"bytes\": %ld, \"lines\": %ld}\n", bytes, lines);
    return 0;
}
