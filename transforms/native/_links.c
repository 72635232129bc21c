/* The common cases of `resolve_links` (transforms/stages/clean_html/links.py) in C.
 *
 * `resolve(origin, hrefs, other, general)` strips the hrefs (as `str.strip`), leaves out empty ones
 * and repeats, and gives, in order, `origin + href` for a path from the root (`/x`, not `//x`),
 * the href itself for an absolute http(s) URL with a host (urljoin's answers for such hrefs), and
 * for the rest `other(href)`, leaving out None and repeats. An href that starts with `/` or `h` is
 * only answered inline when it is ASCII, without characters that urljoin treats apart (tab, CR,
 * LF, `;`, `[`, `]`), an empty query or fragment (`?#`, a trailing `?` or `#`) or a dot segment
 * (`/.`); one that is not goes to `general(href)`, which checks it on its own (the other hrefs of
 * its page are still answered here).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>

/* Whether `href` (ASCII) starts with `scheme` and then a host: a character other than / ? #. */
static int absolute_with_host(const char *href, Py_ssize_t length, const char *scheme) {
    Py_ssize_t prefix = (Py_ssize_t)strlen(scheme);
    if (length <= prefix || memcmp(href, scheme, prefix) != 0)
        return 0;
    char next = href[prefix];
    return next != '/' && next != '?' && next != '#';
}

/* `href` stripped as `str.strip` does it (a new reference). */
static PyObject *stripped(PyObject *href) {
    Py_ssize_t length = PyUnicode_GET_LENGTH(href);
    if (length > 0 && !Py_UNICODE_ISSPACE(PyUnicode_READ_CHAR(href, 0))
        && !Py_UNICODE_ISSPACE(PyUnicode_READ_CHAR(href, length - 1)))
        return Py_NewRef(href);
    return PyObject_CallMethod(href, "strip", NULL);
}

/* Whether an href that starts with / or h can take the inline answers (see above). */
static int plain(PyObject *href) {
    if (!PyUnicode_IS_ASCII(href))
        return 0;
    const char *text = (const char *)PyUnicode_DATA(href);
    Py_ssize_t length = PyUnicode_GET_LENGTH(href);
    if (text[length - 1] == '?' || text[length - 1] == '#')
        return 0;
    for (Py_ssize_t i = 0; i < length; i++) {
        char c = text[i];
        if (c == '\t' || c == '\r' || c == '\n' || c == ';' || c == '[' || c == ']'
            || (c == '?' && text[i + 1] == '#') || (c == '/' && text[i + 1] == '.'))
            return 0;
    }
    return 1;
}

static PyObject *resolve(PyObject *module, PyObject *args) {
    (void)module;
    PyObject *origin, *hrefs, *other, *general;
    if (!PyArg_ParseTuple(args, "UOOO:resolve", &origin, &hrefs, &other, &general))
        return NULL;
    PyObject *sequence = PySequence_Fast(hrefs, "hrefs must be a sequence");
    if (sequence == NULL)
        return NULL;
    PyObject *unique = PyDict_New();  /* stripped href -> whether it is general's, in order */
    PyObject *seen = PySet_New(NULL);
    PyObject *resolved = PyList_New(0);
    if (unique == NULL || seen == NULL || resolved == NULL)
        goto error;
    Py_ssize_t count = PySequence_Fast_GET_SIZE(sequence);
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *href = PySequence_Fast_GET_ITEM(sequence, i);
        if (!PyUnicode_Check(href)) {
            PyErr_SetString(PyExc_TypeError, "hrefs must be strings");
            goto error;
        }
        PyObject *key = stripped(href);
        if (key == NULL)
            goto error;
        int status = 0;
        if (PyUnicode_GET_LENGTH(key) > 0) {
            Py_UCS4 first = PyUnicode_READ_CHAR(key, 0);
            /* (The value says whether the href is `general`'s.) */
            PyObject *route = ((first == '/' || first == 'h') && !plain(key)) ? Py_True : Py_None;
            status = PyDict_SetDefault(unique, key, route) == NULL ? -1 : 0;
        }
        Py_DECREF(key);
        if (status < 0)
            goto error;
    }
    PyObject *href, *route;
    Py_ssize_t position = 0;
    while (PyDict_Next(unique, &position, &href, &route)) {
        PyObject *link;
        const char *text = PyUnicode_IS_ASCII(href) ? (const char *)PyUnicode_DATA(href) : NULL;
        Py_ssize_t length = PyUnicode_GET_LENGTH(href);
        if (route == Py_True)
            link = PyObject_CallOneArg(general, href);
        else if (text != NULL && text[0] == '/' && (length == 1 || text[1] != '/'))
            link = PyUnicode_Concat(origin, href);
        else if (text != NULL
                 && (absolute_with_host(text, length, "https://") || absolute_with_host(text, length, "http://")))
            link = Py_NewRef(href);
        else
            link = PyObject_CallOneArg(other, href);
        if (link == NULL)
            goto error;
        int repeated = link == Py_None ? 1 : PySet_Contains(seen, link);
        if (repeated < 0 || (!repeated && (PySet_Add(seen, link) < 0 || PyList_Append(resolved, link) < 0))) {
            Py_DECREF(link);
            goto error;
        }
        Py_DECREF(link);
    }
    Py_DECREF(unique);
    Py_DECREF(seen);
    Py_DECREF(sequence);
    return resolved;
error:
    Py_XDECREF(unique);
    Py_XDECREF(seen);
    Py_XDECREF(resolved);
    Py_DECREF(sequence);
    return NULL;
}

static PyMethodDef methods[] = {
    {"resolve", resolve, METH_VARARGS,
     "resolve(origin, hrefs, other, general) -> list: origin + href for /paths, the href for\n"
     "http(s)://host..., general(href) for a /path or h... href that needs urljoin's checks, other(href)\n"
     "for the rest; stripped, without None and repeats, in order."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_links", NULL, -1, methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__links(void) {
    return PyModule_Create(&module);
}
