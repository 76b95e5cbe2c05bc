/* Reading a toolrun plugin's JSON arguments from stdin and writing JSON to stdout.
 * Deliberately small: top-level string arguments only, which is what these examples take.
 */
#ifndef PLUGIN_IO_H
#define PLUGIN_IO_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* All of stdin, NUL-terminated; exits with an error object when memory runs out. */
static char *read_stdin(size_t *length) {
    size_t size = 0, cap = 4096;
    char *buffer = malloc(cap);
    size_t got;
    while (buffer && (got = fread(buffer + size, 1, cap - size - 1, stdin)) > 0) {
        size += got;
        if (cap - size - 1 == 0) {
            char *bigger = realloc(buffer, cap *= 2);
            if (!bigger) { free(buffer); buffer = NULL; break; }
            buffer = bigger;
        }
    }
    if (!buffer) { puts("{\"error\": \"out of memory reading the arguments\"}"); exit(0); }
    buffer[size] = '\0';
    if (length) *length = size;
    return buffer;
}

/* The string value of top-level key `key` in `json`, unescaped into a new buffer (\uXXXX
 * below 0x80 only); NULL when absent or not a string. */
static char *json_string(const char *json, const char *key) {
    size_t key_length = strlen(key);
    for (const char *at = strchr(json, '"'); at; at = strchr(at + 1, '"')) {
        if (strncmp(at + 1, key, key_length) != 0 || at[1 + key_length] != '"') continue;
        const char *p = at + 2 + key_length;
        while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') p++;
        if (*p++ != ':') continue;
        while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') p++;
        if (*p++ != '"') return NULL;
        char *out = malloc(strlen(p) + 1), *o = out;
        if (!out) return NULL;
        for (; *p && *p != '"'; p++) {
            if (*p != '\\') { *o++ = *p; continue; }
            switch (*++p) {
                case 'n': *o++ = '\n'; break;
                case 't': *o++ = '\t'; break;
                case 'r': *o++ = '\r'; break;
                case 'b': *o++ = '\b'; break;
                case 'f': *o++ = '\f'; break;
                case 'u': {
                    unsigned code = 0;
                    for (int i = 0; i < 4 && p[1]; i++) {
                        char c = *++p;
                        code = code * 16 + (c <= '9' ? c - '0' : (c | 32) - 'a' + 10);
                    }
                    *o++ = code < 0x80 ? (char)code : '?';
                    break;
                }
                case '\0': p--; break;
                default: *o++ = *p;  /* \" \\ \/ */
            }
        }
        *o = '\0';
        return out;
    }
    return NULL;
}

/* `text` as a JSON string, quotes included. */
static void put_json_string(const char *text) {
    putchar('"');
    for (const unsigned char *c = (const unsigned char *)text; *c; c++) {
        if (*c == '"' || *c == '\\') printf("\\%c", *c);
        else if (*c == '\n') fputs("\\n", stdout);
        else if (*c == '\t') fputs("\\t", stdout);
        else if (*c < 0x20) printf("\\u%04x", *c);
        else putchar(*c);
    }
    putchar('"');
}

#endif
