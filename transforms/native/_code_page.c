/* MinimizeText's code pages in C (see `CodePage` in transforms/stages/minimize_text.py).
 *
 * `translate(text, table)` does in one pass what `codecs.charmap_encode`, `bytes.translate` with
 * deletions and collapsing runs of spaces do one after the other: each character of `text` becomes
 * the byte that `table` gives it, or nothing, and a space right after a space is left out. With a
 * `mark`, a character the table does not have becomes that byte (`CodePage.marked_lines`).
 * CPython's charmap encoder looks each character up in a three-level map; here it is one index.
 *
 * `letters(text)` counts the letters of `text` as `_letters` does with the pattern `[\W\d_]+`: the
 * characters that are a word's (alphanumeric, as `str.isalnum`) and not a decimal digit, read by
 * the same Unicode database functions as Python's `re`, without making the text that is left.
 *
 * `outside(text, classes)` reads a text once for `dropped_letter_share`: how many of its characters are
 * letters of the code page that the rules drop, and, where it has a character that can lose letters
 * outside the page, the text with each run of the page's characters made one space and the spaces at
 * its ends left out (what `runs_within.sub(" ", text).strip(" ")` gives).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>

/* `table` holds one native uint16 per code point of the Basic Multilingual Plane. */
enum { TABLE_ENTRIES = 0x10000, DELETED = 0x100, NOT_IN_PAGE = 0xFFFF };

static PyObject *translate(PyObject *module, PyObject *args) {
    (void)module;
    PyObject *text;
    Py_buffer table;
    int mark = -1;
    if (!PyArg_ParseTuple(args, "Uy*|i:translate", &text, &table, &mark))
        return NULL;
    if (mark > 0xFF) {
        PyBuffer_Release(&table);
        return PyErr_Format(PyExc_ValueError, "the mark must be a byte");
    }
    if (table.len != TABLE_ENTRIES * (Py_ssize_t)sizeof(uint16_t)) {
        PyBuffer_Release(&table);
        return PyErr_Format(PyExc_ValueError, "the table must hold %d uint16 entries", TABLE_ENTRIES);
    }
    const uint16_t *map = table.buf;
    Py_ssize_t length = PyUnicode_GET_LENGTH(text);
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    PyObject *result = PyBytes_FromStringAndSize(NULL, length);
    if (result == NULL) {
        PyBuffer_Release(&table);
        return NULL;
    }
    unsigned char *out = (unsigned char *)PyBytes_AS_STRING(result);
    Py_ssize_t written = 0;
    int in_page = 1;
    /* One loop per width of the string's characters. */
#define TRANSLATE(type)                                                                 \
    for (const type *p = data, *end = p + length; p < end; p++) {                      \
        uint16_t byte = *p < TABLE_ENTRIES ? map[*p] : NOT_IN_PAGE;                     \
        if (byte == NOT_IN_PAGE) {                                                      \
            if (mark < 0) {                                                             \
                in_page = 0;                                                            \
                break;                                                                  \
            }                                                                           \
            byte = (uint16_t)mark;                                                      \
        }                                                                               \
        if (byte == DELETED || (byte == ' ' && written > 0 && out[written - 1] == ' ')) \
            continue;                                                                   \
        out[written++] = (unsigned char)byte;                                           \
    }
    if (kind == PyUnicode_1BYTE_KIND)
        TRANSLATE(Py_UCS1)
    else if (kind == PyUnicode_2BYTE_KIND)
        TRANSLATE(Py_UCS2)
    else
        TRANSLATE(Py_UCS4)
#undef TRANSLATE
    if (!in_page) {
        Py_DECREF(result);
        PyBuffer_Release(&table);
        Py_RETURN_NONE;
    }
    PyBuffer_Release(&table);
    if (written != length && _PyBytes_Resize(&result, written) < 0)
        return NULL;
    return result;
}

/* Whether `re`'s `[\W\d_]` leaves `character` out: alphanumeric (`\w` without `_`) and not `\d`. */
static int letter(Py_UCS4 character) {
    if (character < 0x80)
        return (character >= 'a' && character <= 'z') || (character >= 'A' && character <= 'Z');
    return Py_UNICODE_ISALNUM(character) && !Py_UNICODE_ISDECIMAL(character);
}

static PyObject *letters(PyObject *module, PyObject *args) {
    (void)module;
    PyObject *text;
    if (!PyArg_ParseTuple(args, "U:letters", &text))
        return NULL;
    Py_ssize_t length = PyUnicode_GET_LENGTH(text), count = 0;
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    for (Py_ssize_t i = 0; i < length; i++)
        count += letter(PyUnicode_READ(kind, data, i));
    return PyLong_FromSsize_t(count);
}

/* The classes of `outside`'s table, one byte per code point (past its end: OTHER). */
enum { PAGE = 0, KEPT = 1, OTHER = 2, PAGE_DROPPED = 3 };

static PyObject *outside(PyObject *module, PyObject *args) {
    (void)module;
    PyObject *text;
    Py_buffer table;
    if (!PyArg_ParseTuple(args, "Uy*:outside", &text, &table))
        return NULL;
    const unsigned char *classes = table.buf;
    Py_ssize_t entries = table.len, length = PyUnicode_GET_LENGTH(text), dropped = 0;
    int kind = PyUnicode_KIND(text), other = 0;
    const void *data = PyUnicode_DATA(text);
    for (Py_ssize_t i = 0; i < length; i++) {
        Py_UCS4 character = PyUnicode_READ(kind, data, i);
        int class = (Py_ssize_t)character < entries ? classes[character] : OTHER;
        dropped += class == PAGE_DROPPED;
        other |= class == OTHER;
    }
    if (!other) {
        PyBuffer_Release(&table);
        return Py_BuildValue("nO", dropped, Py_None);
    }
    Py_UCS4 *kept = PyMem_Malloc(length * sizeof(Py_UCS4) + 1);
    if (kept == NULL) {
        PyBuffer_Release(&table);
        return PyErr_NoMemory();
    }
    Py_ssize_t written = 0;
    int after_page = 0;
    for (Py_ssize_t i = 0; i < length; i++) {
        Py_UCS4 character = PyUnicode_READ(kind, data, i);
        int class = (Py_ssize_t)character < entries ? classes[character] : OTHER;
        if (class == PAGE || class == PAGE_DROPPED) {
            after_page = 1;
            continue;
        }
        /* (A run of the page's characters before the first other one, or after the last, leaves nothing.) */
        if (after_page && written > 0)
            kept[written++] = ' ';
        after_page = 0;
        kept[written++] = character;
    }
    PyBuffer_Release(&table);
    PyObject *result = PyUnicode_FromKindAndData(PyUnicode_4BYTE_KIND, kept, written);
    PyMem_Free(kept);
    if (result == NULL)
        return NULL;
    return Py_BuildValue("nN", dropped, result);
}

static PyMethodDef methods[] = {
    {"translate", translate, METH_VARARGS,
     "translate(text, table[, mark]) -> bytes, or None when a character of text is not in the table\n"
     "(with mark, that byte stands for it). table: 65,536 native uint16, by code point: the byte, 0x100\n"
     "to leave it out, 0xFFFF not in the code page. Runs of spaces in the result collapse to one."},
    {"letters", letters, METH_VARARGS,
     "letters(text) -> int: how many characters of text are alphanumeric and not decimal digits\n"
     "(what re's [\\W\\d_] leaves out)."},
    {"outside", outside, METH_VARARGS,
     "outside(text, classes) -> (dropped, rest): dropped, how many characters of text are of class 3;\n"
     "rest, None where none is of class 2, else text with each run of classes 0 and 3 one space, none at\n"
     "its ends. classes: one byte per code point (0 the code page's, 1 kept, 2 other, 3 the page's\n"
     "dropped letters); a code point past its end is of class 2."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_code_page", NULL, -1, methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__code_page(void) {
    PyObject *m = PyModule_Create(&module);
    if (m != NULL && (PyModule_AddIntConstant(m, "DELETED", DELETED) < 0
                      || PyModule_AddIntConstant(m, "NOT_IN_PAGE", NOT_IN_PAGE) < 0
                      || PyModule_AddIntConstant(m, "PAGE", PAGE) < 0 || PyModule_AddIntConstant(m, "KEPT", KEPT) < 0
                      || PyModule_AddIntConstant(m, "OTHER", OTHER) < 0
                      || PyModule_AddIntConstant(m, "PAGE_DROPPED", PAGE_DROPPED) < 0)) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
