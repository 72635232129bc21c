/* The line hashes of a page's blocks (transforms/stages/site_boilerplate.py's `block_hashes`), with the pure
 * path's exact values.
 *
 * `block_hashes(blocks)` gives, for each block (str), the signed 64-bit hash of its normalised line: case folded
 * (str.casefold, called for a block that is not ASCII), decimal digits made 0, each run of characters other than
 * letters and digits (`_` included) made one space, and the ends stripped; the hash is BLAKE2b with an 8-byte
 * digest (RFC 7693, as hashlib.blake2b(line, digest_size=8)) of the line in UTF-8, read as a big-endian signed
 * integer; 0 for a line without a letter or digit. One call a page: no Python object a line.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

static const uint64_t blake2b_iv[8] = {
    0x6A09E667F3BCC908ull, 0xBB67AE8584CAA73Bull, 0x3C6EF372FE94F82Bull, 0xA54FF53A5F1D36F1ull,
    0x510E527FADE682D1ull, 0x9B05688C2B3E6C1Full, 0x1F83D9ABFB41BD6Bull, 0x5BE0CD19137E2179ull};

static const uint8_t blake2b_sigma[12][16] = {
    {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}, {14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3},
    {11, 8, 12, 0, 5, 2, 15, 13, 10, 14, 3, 6, 7, 1, 9, 4}, {7, 9, 3, 1, 13, 12, 11, 14, 2, 6, 5, 10, 4, 0, 15, 8},
    {9, 0, 5, 7, 2, 4, 10, 15, 14, 1, 11, 12, 6, 8, 3, 13}, {2, 12, 6, 10, 0, 11, 8, 3, 4, 13, 7, 5, 15, 14, 1, 9},
    {12, 5, 1, 15, 14, 13, 4, 10, 0, 7, 6, 3, 9, 2, 8, 11}, {13, 11, 7, 14, 12, 1, 3, 9, 5, 0, 15, 4, 8, 6, 2, 10},
    {6, 15, 14, 9, 11, 3, 0, 8, 12, 2, 13, 7, 1, 4, 10, 5}, {10, 2, 8, 4, 7, 6, 1, 5, 15, 11, 9, 14, 3, 12, 13, 0},
    {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}, {14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3}};

static inline uint64_t rotated(uint64_t value, int by) { return (value >> by) | (value << (64 - by)); }

static inline uint64_t little_endian(const uint8_t *bytes) {
    uint64_t value = 0;
    for (int i = 7; i >= 0; i--) value = (value << 8) | bytes[i];
    return value;
}

#define MIX(a, b, c, d, x, y)                                 \
    do {                                                      \
        v[a] = v[a] + v[b] + (x); v[d] = rotated(v[d] ^ v[a], 32); \
        v[c] = v[c] + v[d];       v[b] = rotated(v[b] ^ v[c], 24); \
        v[a] = v[a] + v[b] + (y); v[d] = rotated(v[d] ^ v[a], 16); \
        v[c] = v[c] + v[d];       v[b] = rotated(v[b] ^ v[c], 63); \
    } while (0)

/* One 128-byte block into the state `h`: `counted` bytes hashed so far, this block's included. */
static void compressed(uint64_t h[8], const uint8_t block[128], uint64_t counted, int last) {
    uint64_t v[16], m[16];
    for (int i = 0; i < 8; i++) { v[i] = h[i]; v[i + 8] = blake2b_iv[i]; }
    v[12] ^= counted;
    if (last) v[14] = ~v[14];
    for (int i = 0; i < 16; i++) m[i] = little_endian(block + 8 * i);
    for (int round = 0; round < 12; round++) {
        const uint8_t *s = blake2b_sigma[round];
        MIX(0, 4, 8, 12, m[s[0]], m[s[1]]);
        MIX(1, 5, 9, 13, m[s[2]], m[s[3]]);
        MIX(2, 6, 10, 14, m[s[4]], m[s[5]]);
        MIX(3, 7, 11, 15, m[s[6]], m[s[7]]);
        MIX(0, 5, 10, 15, m[s[8]], m[s[9]]);
        MIX(1, 6, 11, 12, m[s[10]], m[s[11]]);
        MIX(2, 7, 8, 13, m[s[12]], m[s[13]]);
        MIX(3, 4, 9, 14, m[s[14]], m[s[15]]);
    }
    for (int i = 0; i < 8; i++) h[i] ^= v[i] ^ v[i + 8];
}

/* BLAKE2b-64 of `data`, its 8 digest bytes read big-endian as a signed integer. */
static int64_t hash_of(const uint8_t *data, size_t size) {
    uint64_t h[8];
    uint8_t block[128];
    memcpy(h, blake2b_iv, sizeof h);
    h[0] ^= 0x01010000ull ^ 8;  /* no key, an 8-byte digest */
    size_t done = 0;
    while (size - done > 128) {
        compressed(h, data + done, (uint64_t)(done + 128), 0);
        done += 128;
    }
    memset(block, 0, sizeof block);
    memcpy(block, data + done, size - done);
    compressed(h, block, (uint64_t)size, 1);
    uint64_t value = 0;
    for (int i = 0; i < 8; i++) value = (value << 8) | ((h[0] >> (8 * i)) & 0xFF);
    return (int64_t)value;
}

typedef struct {
    uint8_t *bytes;
    size_t size, capacity;
} Line;

static int grown(Line *line, size_t more) {
    if (line->size + more <= line->capacity) return 0;
    size_t capacity = line->capacity ? line->capacity : 256;
    while (capacity < line->size + more) capacity *= 2;
    uint8_t *bytes = PyMem_Realloc(line->bytes, capacity);
    if (bytes == NULL) { PyErr_NoMemory(); return -1; }
    line->bytes = bytes;
    line->capacity = capacity;
    return 0;
}

/* A word character's code point in UTF-8 after the line (a space first where a run of others came between). */
static int appended(Line *line, Py_UCS4 code_point, int *apart) {
    if (grown(line, 5) < 0) return -1;
    if (*apart && line->size) line->bytes[line->size++] = ' ';
    *apart = 0;
    uint8_t *out = line->bytes + line->size;
    if (code_point < 0x80) {
        out[0] = (uint8_t)code_point; line->size += 1;
    } else if (code_point < 0x800) {
        out[0] = 0xC0 | (code_point >> 6); out[1] = 0x80 | (code_point & 0x3F); line->size += 2;
    } else if (code_point < 0x10000) {
        out[0] = 0xE0 | (code_point >> 12); out[1] = 0x80 | ((code_point >> 6) & 0x3F);
        out[2] = 0x80 | (code_point & 0x3F); line->size += 3;
    } else {
        out[0] = 0xF0 | (code_point >> 18); out[1] = 0x80 | ((code_point >> 12) & 0x3F);
        out[2] = 0x80 | ((code_point >> 6) & 0x3F); out[3] = 0x80 | (code_point & 0x3F); line->size += 4;
    }
    return 0;
}

/* The normalised line of `block` (see the module's comment) into `line`. */
static int normalised(PyObject *block, Line *line) {
    line->size = 0;
    int apart = 0;
    if (PyUnicode_IS_ASCII(block)) {
        const char *text = (const char *)PyUnicode_DATA(block);
        Py_ssize_t length = PyUnicode_GET_LENGTH(block);
        for (Py_ssize_t i = 0; i < length; i++) {
            char c = text[i];
            if (c >= '0' && c <= '9') c = '0';
            else if (c >= 'A' && c <= 'Z') c = (char)(c - 'A' + 'a');
            else if (!(c >= 'a' && c <= 'z')) { apart = 1; continue; }
            if (appended(line, (Py_UCS4)c, &apart) < 0) return -1;
        }
        return 0;
    }
    PyObject *folded = PyObject_CallMethod(block, "casefold", NULL);
    if (folded == NULL) return -1;
    int kind = PyUnicode_KIND(folded);
    const void *data = PyUnicode_DATA(folded);
    Py_ssize_t length = PyUnicode_GET_LENGTH(folded);
    for (Py_ssize_t i = 0; i < length; i++) {
        Py_UCS4 code_point = PyUnicode_READ(kind, data, i);
        if (Py_UNICODE_ISDECIMAL(code_point)) code_point = '0';
        else if (code_point == '_' || !Py_UNICODE_ISALNUM(code_point)) { apart = 1; continue; }
        if (appended(line, code_point, &apart) < 0) { Py_DECREF(folded); return -1; }
    }
    Py_DECREF(folded);
    return 0;
}

static PyObject *block_hashes(PyObject *module, PyObject *blocks) {
    if (!PyList_Check(blocks)) {
        PyErr_SetString(PyExc_TypeError, "block_hashes takes a list of str");
        return NULL;
    }
    Py_ssize_t count = PyList_GET_SIZE(blocks);
    PyObject *hashes = PyList_New(count);
    if (hashes == NULL) return NULL;
    Line line = {NULL, 0, 0};
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *block = PyList_GET_ITEM(blocks, i);
        if (!PyUnicode_Check(block)) {
            PyErr_SetString(PyExc_TypeError, "block_hashes takes a list of str");
            goto failed;
        }
        if (normalised(block, &line) < 0) goto failed;
        PyObject *hash = PyLong_FromLongLong(line.size ? hash_of(line.bytes, line.size) : 0);
        if (hash == NULL) goto failed;
        PyList_SET_ITEM(hashes, i, hash);
    }
    PyMem_Free(line.bytes);
    return hashes;
failed:
    PyMem_Free(line.bytes);
    Py_DECREF(hashes);
    return NULL;
}

static PyMethodDef methods[] = {
    {"block_hashes", block_hashes, METH_O, "The signed 64-bit hash of each block's normalised line (0: no line)."},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_line_hashes", NULL, -1, methods};

PyMODINIT_FUNC PyInit__line_hashes(void) { return PyModule_Create(&module); }
