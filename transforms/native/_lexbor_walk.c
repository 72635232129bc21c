/* CleanHtml's walk over a parsed page, in C (see transforms/stages/clean_html/rules.py for the rules).
 *
 * One pass in document order over the tree that selectolax parsed. It collects the metadata
 * (links, title, base, meta, link) and writes the text of the cleaned page: dropped and hidden
 * subtrees are passed over, inline elements are transparent, and every other node is a block
 * boundary. The tree is not modified. The result is what removing, unwrapping, merging the
 * adjacent text nodes and `text(separator=BOUNDARY)` would give, with each block's whitespace
 * collapsed as Python's `str.split` does and empty blocks left out.
 *
 * selectolax links lexbor into its own extension module and installs no headers. This module is
 * compiled against the headers of that very lexbor (setup.py takes them from the sdist of the
 * selectolax release that requirements.txt pins: lexbor_headers.py), so its types, struct fields
 * and function prototypes are lexbor's declarations. The functions are lexbor's exported API in
 * selectolax's module: `bind` looks them up there by their declared names, after cleaning/c_walk.py
 * has checked that the installed selectolax is the release the headers came from, with the same
 * lexbor version (`SELECTOLAX_VERSION`, `LEXBOR_VERSION`).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <dlfcn.h>
#include <stdint.h>
#include <string.h>

#include <lexbor/core/base.h>
#include <lexbor/core/str.h>
#include <lexbor/dom/interface.h>
#include <lexbor/dom/interfaces/attr.h>
#include <lexbor/dom/interfaces/character_data.h>
#include <lexbor/dom/interfaces/element.h>
#include <lexbor/dom/interfaces/node.h>

#ifndef WEBCORPUS_SELECTOLAX_VERSION
#error "WEBCORPUS_SELECTOLAX_VERSION: the selectolax release whose lexbor headers this is compiled against (setup.py)"
#endif

/* lexbor's functions, typed by their declarations; `bind` fills them in. */
#define LEXBOR_FUNCTIONS(X)                                        \
    X(node_first_child, lxb_dom_node_first_child_noi)              \
    X(node_next, lxb_dom_node_next_noi)                            \
    X(node_parent, lxb_dom_node_parent_noi)                        \
    X(node_type, lxb_dom_node_type_noi)                            \
    X(node_tag_id, lxb_dom_node_tag_id_noi)                        \
    X(element_first_attribute, lxb_dom_element_first_attribute_noi) \
    X(element_next_attribute, lxb_dom_element_next_attribute_noi)  \
    X(attr_qualified_name, lxb_dom_attr_qualified_name)            \
    X(attr_value, lxb_dom_attr_value_noi)                          \
    X(element_qualified_name, lxb_dom_element_qualified_name)
#define DECLARE(variable, function) static __typeof__(function) *variable;
LEXBOR_FUNCTIONS(DECLARE)
#undef DECLARE

/* lexbor's node types. */
static const lxb_dom_node_type_t TYPE_ELEMENT = LXB_DOM_NODE_TYPE_ELEMENT, TYPE_TEXT = LXB_DOM_NODE_TYPE_TEXT,
                                 TYPE_COMMENT = LXB_DOM_NODE_TYPE_COMMENT;

/* What the walk does with an element, by tag id (the table comes from cleaning/rules.py). */
enum { KIND_BLOCK, KIND_DROP, KIND_INLINE, KIND_ANCHOR, KIND_ABBREVIATION, KIND_AREA, KIND_TITLE, KIND_BASE,
       KIND_META, KIND_LINK, KIND_COUNT };

static unsigned char *kinds;
static Py_ssize_t kinds_length;
static uintptr_t noscript_id;
static PyObject *is_hidden_callback;
static int bound;

static const char BOUNDARY = '\0';

/* Main content's features (transforms/stages/clean_html/main_content.py; `bind_features` sets them): the flags of an
 * element by tag id, the class and id substrings that flag it (grouped by first byte, lowercase), the
 * role and itemprop values that do, the flag of text inside a link, those of main content (which clear
 * the boilerplate flags inherited from outside it) and the boilerplate flags. */
#define MAX_KEYWORDS 64
typedef struct {
    char text[32];
    size_t length;
    uint32_t flags;
} Keyword;
static uint32_t *tag_flags;
static Py_ssize_t tag_flags_length;
static Keyword class_keywords[MAX_KEYWORDS], role_keywords[MAX_KEYWORDS];
static size_t class_keyword_count, role_keyword_count;
/* The class keywords by their first byte (either case): indexes into `class_keywords`, -1 after the last. */
static signed char keywords_by_first_byte[256][MAX_KEYWORDS + 1];
static uint32_t link_flag, main_flags, boilerplate_flags;
static int features_bound;

typedef struct {
    char *data;
    size_t length, capacity;
} Buffer;

/* Appends `length` bytes of `data`; with `data` NULL, makes room for them (the caller writes them). */
static int buffer_append(Buffer *buffer, const void *data, size_t length) {
    if (buffer->length + length > buffer->capacity) {
        size_t capacity = buffer->capacity ? buffer->capacity : 4096;
        while (capacity < buffer->length + length)
            capacity *= 2;
        char *grown = PyMem_Realloc(buffer->data, capacity);
        if (grown == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        buffer->data = grown;
        buffer->capacity = capacity;
    }
    if (data != NULL)
        memcpy(buffer->data + buffer->length, data, length);
    buffer->length += length;
    return 0;
}

/* An open element. `clean`: its children follow the cleaning rules (inside the body, not in a
 * dropped subtree); otherwise they are only looked at for metadata. */
typedef struct {
    lxb_dom_node_t *node;
    unsigned char clean;
    unsigned char transparent;      /* an inline element: no block boundary */
    unsigned char has_kept_child;   /* a child that was not dropped */
    unsigned char previous_is_shown_inline; /* the last kept child is an inline element with content */
    unsigned char previous_ends_lowercase;  /* ... whose text ends with a lowercase letter */
    unsigned char link_space_pending;       /* a link after a shown inline element: a space before its content */
    unsigned char case_space_pending;       /* an inline element after one ending lowercase: a space before its
                                             * text if that starts with an uppercase letter */
    size_t written_before;          /* the walk's `written` when the element started */
    uint32_t flags;                 /* main content's flags of the text below it (features only) */
    PyObject *expansion;            /* abbr's title, whitespace collapsed */
} Frame;

typedef struct {
    Buffer run;     /* the raw text of the current block */
    Buffer out;     /* the finished blocks, collapsed, BOUNDARY between them */
    int has_block;
    Frame *frames;
    size_t depth, capacity;
    lxb_dom_node_t *body;
    int body_hidden;
    int title_seen, base_seen, canonical_seen;
    int may_hold_entities; /* the text has `&`, 2-32 letters, digits or `#`, then `;` */
    size_t written;         /* the bytes of text written to the runs so far */
    int case_space_pending; /* the next text written gets a space before it if it starts uppercase */
    PyObject *user_hidden;
    int features;           /* collect each block's (flags, link bytes, bytes) in `block_features` */
    uint32_t block_flags, block_link_bytes, block_bytes;
    Buffer block_features;
    PyObject *hrefs;
    PyObject *events;
} Walk;

static const lexbor_str_t *text_data(lxb_dom_node_t *node) {
    return &lxb_dom_interface_character_data(node)->data;
}

static int ascii_equal_ignoring_case(const unsigned char *data, size_t length, const char *lower) {
    size_t expected = strlen(lower);
    if (length != expected)
        return 0;
    for (size_t i = 0; i < length; i++) {
        unsigned char c = data[i];
        if (c >= 'A' && c <= 'Z')
            c += 'a' - 'A';
        if (c != (unsigned char)lower[i])
            return 0;
    }
    return 1;
}

static int ascii_contains_ignoring_case(const unsigned char *data, size_t length, const char *lower) {
    size_t needle = strlen(lower);
    for (size_t start = 0; start + needle <= length; start++)
        if (ascii_equal_ignoring_case(data + start, needle, lower))
            return 1;
    return 0;
}

static PyObject *decode(const unsigned char *data, size_t length) {
    return PyUnicode_DecodeUTF8((const char *)data, (Py_ssize_t)length, "replace");
}

/* The attribute whose qualified name is `name` (ASCII case ignored), as selectolax's `attrs` finds it. */
static lxb_dom_attr_t *attribute(lxb_dom_element_t *element, const char *name) {
    for (lxb_dom_attr_t *attr = element_first_attribute(element); attr != NULL; attr = element_next_attribute(attr)) {
        size_t length = 0;
        const unsigned char *qualified = attr_qualified_name(attr, &length);
        if (qualified != NULL && ascii_equal_ignoring_case(qualified, length, name))
            return attr;
    }
    return NULL;
}

/* An attribute's value as text; "" for an attribute without one. */
static PyObject *attribute_text(lxb_dom_attr_t *attr) {
    size_t length = 0;
    const unsigned char *value = attr_value(attr, &length);
    return decode(value != NULL ? value : (const unsigned char *)"", value != NULL ? length : 0);
}

/* selectolax's `attributes`: qualified name -> value, None for an attribute without one. */
static PyObject *attributes_dict(lxb_dom_element_t *element) {
    PyObject *attributes = PyDict_New();
    if (attributes == NULL)
        return NULL;
    for (lxb_dom_attr_t *attr = element_first_attribute(element); attr != NULL; attr = element_next_attribute(attr)) {
        size_t name_length = 0, value_length = 0;
        const unsigned char *name = attr_qualified_name(attr, &name_length);
        const unsigned char *value = attr_value(attr, &value_length);
        PyObject *key = decode(name != NULL ? name : (const unsigned char *)"", name != NULL ? name_length : 0);
        PyObject *item = value != NULL ? decode(value, value_length) : Py_NewRef(Py_None);
        if (key == NULL || item == NULL || PyDict_SetItem(attributes, key, item) < 0) {
            Py_XDECREF(key);
            Py_XDECREF(item);
            Py_DECREF(attributes);
            return NULL;
        }
        Py_DECREF(key);
        Py_DECREF(item);
    }
    return attributes;
}

/* The text of the text nodes below `top`, as selectolax's `text()`. */
static PyObject *subtree_text(lxb_dom_node_t *top) {
    Buffer text = {0};
    lxb_dom_node_t *node = node_first_child(top);
    while (node != NULL) {
        if (node_type(node) == TYPE_TEXT) {
            const lexbor_str_t *data = text_data(node);
            if (data->data != NULL && buffer_append(&text, data->data, data->length) < 0) {
                PyMem_Free(text.data);
                return NULL;
            }
        }
        lxb_dom_node_t *child = node_first_child(node);
        if (child != NULL) {
            node = child;
            continue;
        }
        while (node != top && node_next(node) == NULL)
            node = node_parent(node);
        node = node == top ? NULL : node_next(node);
    }
    PyObject *result = decode((const unsigned char *)(text.data ? text.data : ""), text.length);
    PyMem_Free(text.data);
    return result;
}

/* Bytes by what they may start: 1 an ASCII whitespace character, 2 a longer one (`str.isspace`:
 * U+0085, U+00A0, U+1680, U+2000-U+200A, U+2028, U+2029, U+202F, U+205F, U+3000), 3 an entity. */
static unsigned char byte_class[256];

static void fill_byte_class(void) {
    for (int c = '\t'; c <= '\r'; c++)
        byte_class[c] = 1;
    for (int c = 0x1c; c <= ' '; c++)
        byte_class[c] = 1;
    byte_class[0xC2] = byte_class[0xE1] = byte_class[0xE2] = byte_class[0xE3] = 2;
    byte_class['&'] = 3;
}

/* The length of the whitespace character that starts at `p`, else 0. */
static size_t whitespace_length(const unsigned char *p, const unsigned char *end) {
    unsigned char c = p[0];
    if (byte_class[c] != 2)
        return byte_class[c] == 1;
    size_t left = (size_t)(end - p);
    if (c == 0xC2)
        return left >= 2 && (p[1] == 0x85 || p[1] == 0xA0) ? 2 : 0;
    if (left < 3)
        return 0;
    if (c == 0xE1)
        return p[1] == 0x9A && p[2] == 0x80 ? 3 : 0;
    if (c == 0xE3)
        return p[1] == 0x80 && p[2] == 0x80 ? 3 : 0;
    if (p[1] == 0x80)
        return (p[2] >= 0x80 && p[2] <= 0x8A) || p[2] == 0xA8 || p[2] == 0xA9 || p[2] == 0xAF ? 3 : 0;
    return p[1] == 0x81 && p[2] == 0x9F ? 3 : 0;
}

/* Whether an entity may start at `p` (an `&`): what `decode_leftover_entities` would decode is among these. */
static int entity_like(const unsigned char *p, const unsigned char *end) {
    const unsigned char *q = p + 1;
    while (q < end && q - p <= 33 && (Py_ISALNUM(*q) || *q == '#'))
        q++;
    return q < end && *q == ';' && q - p >= 3;
}

/* A block boundary: the current block, whitespace collapsed, goes to the output unless empty. */
static int end_block(Walk *walk) {
    size_t emitted_before = walk->out.length;
    const unsigned char *p = (const unsigned char *)walk->run.data;
    const unsigned char *end = p + walk->run.length;
    walk->run.length = 0;
    /* The block, BOUNDARY before it, fits in the run's length plus one. */
    if (buffer_append(&walk->out, NULL, (size_t)(end - p) + 1) < 0)
        return -1;
    unsigned char *out = (unsigned char *)walk->out.data + walk->out.length - ((size_t)(end - p) + 1);
    /* 0: before the block's first word; 1: in a word; 2: after a word, in whitespace. */
    int state = 0;
    while (p < end) {
        size_t width = byte_class[*p] ? whitespace_length(p, end) : 0;
        if (width) {
            state = state ? 2 : 0;
            p += width;
            continue;
        }
        if (state != 1) {
            if (state == 2)
                *out++ = ' ';
            else if (walk->has_block)
                *out++ = (unsigned char)BOUNDARY;
            state = 1;
            walk->has_block = 1;
        }
        if (*p == '&' && !walk->may_hold_entities)
            walk->may_hold_entities = entity_like(p, end);
        /* This byte, and the plain ones after it. */
        do
            *out++ = *p++;
        while (p < end && !byte_class[*p]);
    }
    walk->out.length = (size_t)(out - (unsigned char *)walk->out.data);
    if (walk->features) {
        if (walk->out.length > emitted_before) { /* a block was written */
            uint32_t features[3] = {walk->block_flags, walk->block_link_bytes, walk->block_bytes};
            if (buffer_append(&walk->block_features, features, sizeof features) < 0)
                return -1;
        }
        walk->block_flags = walk->block_link_bytes = walk->block_bytes = 0;
    }
    return 0;
}

/* The code point that starts the UTF-8 at `p` (`length` bytes, at least one); 0 if it is not valid. */
static Py_UCS4 first_code_point(const unsigned char *p, size_t length) {
    size_t width = p[0] < 0x80 ? 1 : p[0] >= 0xF0 ? 4 : p[0] >= 0xE0 ? 3 : p[0] >= 0xC0 ? 2 : 0;
    if (width == 0 || width > length)
        return 0;
    Py_UCS4 code = width == 1 ? p[0] : p[0] & (0x7F >> width);
    for (size_t i = 1; i < width; i++) {
        if ((p[i] & 0xC0) != 0x80)
            return 0;
        code = code << 6 | (p[i] & 0x3F);
    }
    return code;
}

/* Whether the run ends with a lowercase letter (`str.islower` of its last character). */
static int run_ends_lowercase(const Buffer *run) {
    size_t start = run->length;
    while (start > 0 && run->length - start < 4 && ((unsigned char)run->data[start - 1] & 0xC0) == 0x80)
        start--;
    if (start == 0)
        return 0;
    start--;
    return Py_UNICODE_ISLOWER(first_code_point((const unsigned char *)run->data + start, run->length - start));
}

/* Text of the block: a pending case space goes before it when it starts with an uppercase letter. */
static int write_text(Walk *walk, const void *data, size_t length) {
    if (length == 0)
        return 0;
    if (walk->case_space_pending) {
        walk->case_space_pending = 0;
        if (Py_UNICODE_ISUPPER(first_code_point(data, length)) && buffer_append(&walk->run, " ", 1) < 0)
            return -1;
    }
    walk->written += length;
    if (walk->features) {
        uint32_t flags = walk->frames[walk->depth - 1].flags;
        walk->block_flags |= flags;
        walk->block_bytes += (uint32_t)length;
        if (flags & link_flag)
            walk->block_link_bytes += (uint32_t)length;
    }
    return buffer_append(&walk->run, data, length);
}

/* `parent` gets a child that stays: a pending link space goes before it. */
static int keep_child(Walk *walk, Frame *parent) {
    if (parent->link_space_pending && !parent->has_kept_child && write_text(walk, " ", 1) < 0)
        return -1;
    parent->has_kept_child = 1;
    return 0;
}

static int add_href(Walk *walk, lxb_dom_element_t *element) {
    lxb_dom_attr_t *href = attribute(element, "href");
    if (href == NULL)
        return 0;
    size_t length = 0;
    const unsigned char *value = attr_value(href, &length);
    if (value == NULL || length == 0)
        return 0;
    PyObject *text = decode(value, length);
    if (text == NULL)
        return -1;
    int status = PyList_Append(walk->hrefs, text);
    Py_DECREF(text);
    return status;
}

static int add_event(Walk *walk, int kind, PyObject *value) {
    if (value == NULL)
        return -1;
    PyObject *event = Py_BuildValue("(iN)", kind, value);
    if (event == NULL)
        return -1;
    int status = PyList_Append(walk->events, event);
    Py_DECREF(event);
    return status;
}

/* Rule 1: the links and what `page_metadata` needs of title, base, link and meta. */
static int collect_metadata(Walk *walk, lxb_dom_element_t *element, int kind) {
    lxb_dom_attr_t *href;
    switch (kind) {
    case KIND_ANCHOR:
    case KIND_AREA:
        return add_href(walk, element);
    case KIND_TITLE:
        if (walk->title_seen)
            return 0;
        walk->title_seen = 1;
        return add_event(walk, kind, subtree_text(lxb_dom_interface_node(element)));
    case KIND_BASE:
        /* The first base with an href: the href. */
        if (walk->base_seen || (href = attribute(element, "href")) == NULL)
            return 0;
        walk->base_seen = 1;
        return add_event(walk, kind, attribute_text(href));
    case KIND_LINK: {
        /* The first link rel="canonical" (ASCII case ignored) with an href: the href. */
        lxb_dom_attr_t *rel = attribute(element, "rel");
        size_t length = 0;
        const unsigned char *value = rel != NULL ? attr_value(rel, &length) : NULL;
        if (walk->canonical_seen || value == NULL || !ascii_equal_ignoring_case(value, length, "canonical")
            || (href = attribute(element, "href")) == NULL)
            return 0;
        walk->canonical_seen = 1;
        return add_event(walk, kind, attribute_text(href));
    }
    case KIND_META:
        /* A meta with content: its attributes. */
        return attribute(element, "content") == NULL ? 0 : add_event(walk, kind, attributes_dict(element));
    default:
        return 0;
    }
}

/* Rule 2: whether the element is hidden. The candidates are what the CSS selector
 * `[hidden], [aria-hidden="true" i], [style*="display" i], [style*="visibility" i], noscript,
 * annotation` matches; cleaning/rules.py's `is_hidden` decides on them. 1, 0, or -1 on error. */
static int hidden(Walk *walk, lxb_dom_element_t *element, uintptr_t tag_id) {
    if (walk->user_hidden != Py_None) {
        PyObject *key = PyLong_FromVoidPtr(element);
        if (key == NULL)
            return -1;
        int found = PySet_Contains(walk->user_hidden, key);
        Py_DECREF(key);
        if (found)
            return found;
    }
    /* MathML's annotation has no tag id of its own in lexbor: it is known by its name. */
    const char *tag = NULL;
    if (tag_id == noscript_id) {
        tag = "noscript";
    } else if (tag_id >= (uintptr_t)kinds_length) {
        size_t length = 0;
        const unsigned char *name = element_qualified_name(element, &length);
        if (name != NULL && ascii_equal_ignoring_case(name, length, "annotation"))
            tag = "annotation";
    }
    int candidate = tag != NULL;
    for (lxb_dom_attr_t *attr = element_first_attribute(element); attr != NULL && !candidate;
         attr = element_next_attribute(attr)) {
        size_t length = 0, value_length = 0;
        const unsigned char *name = attr_qualified_name(attr, &length);
        /* Most attributes differ from these three in length. */
        if (name == NULL || (length != 5 && length != 6 && length != 11))
            continue;
        if (ascii_equal_ignoring_case(name, length, "hidden")) {
            candidate = 1;
        } else if (ascii_equal_ignoring_case(name, length, "aria-hidden")) {
            const unsigned char *value = attr_value(attr, &value_length);
            candidate = value != NULL && ascii_equal_ignoring_case(value, value_length, "true");
        } else if (ascii_equal_ignoring_case(name, length, "style")) {
            const unsigned char *value = attr_value(attr, &value_length);
            candidate = value != NULL && (ascii_contains_ignoring_case(value, value_length, "display")
                                          || ascii_contains_ignoring_case(value, value_length, "visibility"));
        }
    }
    if (!candidate)
        return 0;
    PyObject *attributes = attributes_dict(element);
    if (attributes == NULL)
        return -1;
    PyObject *text = tag_id == noscript_id ? subtree_text(lxb_dom_interface_node(element)) : Py_NewRef(Py_None);
    if (text == NULL) {
        Py_DECREF(attributes);
        return -1;
    }
    PyObject *answer = PyObject_CallFunction(is_hidden_callback, "zOO", tag, attributes, text);
    Py_DECREF(attributes);
    Py_DECREF(text);
    if (answer == NULL)
        return -1;
    int result = PyObject_IsTrue(answer);
    Py_DECREF(answer);
    return result;
}

/* Whether `keyword` occurs in `data` at `start` (ASCII case ignored). */
static int keyword_at(const unsigned char *data, size_t length, size_t start, const Keyword *keyword) {
    if (start + keyword->length > length)
        return 0;
    for (size_t i = 1; i < keyword->length; i++) { /* the first byte matched already */
        unsigned char c = data[start + i];
        if (c >= 'A' && c <= 'Z')
            c += 'a' - 'A';
        if (c != (unsigned char)keyword->text[i])
            return 0;
    }
    return 1;
}

/* Main content's flags of an element's own: by its tag, by substrings of its class and id, by its role and
 * itemprop; `inherited` are its parent's. An element of main content clears the boilerplate flags above it. */
static uint32_t element_flags(lxb_dom_element_t *element, uintptr_t tag_id, int kind, uint32_t inherited) {
    uint32_t own = tag_id < (uintptr_t)tag_flags_length ? tag_flags[tag_id] : 0;
    if (kind == KIND_ANCHOR && attribute(element, "href") != NULL)
        own |= link_flag; /* not an `<a name>`, which old pages leave open around all their text */
    if (kind == KIND_BLOCK) {
        for (lxb_dom_attr_t *attr = element_first_attribute(element); attr != NULL;
             attr = element_next_attribute(attr)) {
            size_t length = 0, value_length = 0;
            const unsigned char *name = attr_qualified_name(attr, &length);
            if (name == NULL || (length != 2 && length != 4 && length != 5 && length != 8))
                continue;
            int by_substring = ascii_equal_ignoring_case(name, length, "class")
                               || ascii_equal_ignoring_case(name, length, "id");
            int by_value = !by_substring && (ascii_equal_ignoring_case(name, length, "role")
                                             || ascii_equal_ignoring_case(name, length, "itemprop"));
            if (!by_substring && !by_value)
                continue;
            const unsigned char *value = attr_value(attr, &value_length);
            if (value == NULL)
                continue;
            if (by_value) {
                for (size_t k = 0; k < role_keyword_count; k++)
                    if (ascii_equal_ignoring_case(value, value_length, role_keywords[k].text))
                        own |= role_keywords[k].flags;
                continue;
            }
            for (size_t start = 0; start < value_length; start++)
                for (const signed char *k = keywords_by_first_byte[value[start]]; *k >= 0; k++)
                    if (keyword_at(value, value_length, start, &class_keywords[*k]))
                        own |= class_keywords[*k].flags;
        }
    }
    if (own & main_flags)
        inherited &= ~boilerplate_flags;
    return inherited | own;
}

/* Rule 3: abbr's title, whitespace collapsed; NULL without error when there is none. */
static PyObject *expansion(lxb_dom_element_t *element) {
    lxb_dom_attr_t *title = attribute(element, "title");
    size_t length = 0;
    const unsigned char *value = title != NULL ? attr_value(title, &length) : NULL;
    if (value == NULL || length == 0)
        return NULL;
    PyObject *text = decode(value, length);
    if (text == NULL)
        return NULL;
    PyObject *words = PyUnicode_Split(text, NULL, -1);
    Py_DECREF(text);
    if (words == NULL)
        return NULL;
    PyObject *collapsed = NULL;
    if (PyList_GET_SIZE(words) > 0) {
        PyObject *space = PyUnicode_FromString(" ");
        if (space != NULL) {
            collapsed = PyUnicode_Join(space, words);
            Py_DECREF(space);
        }
    }
    Py_DECREF(words);
    return collapsed;
}

static int push(Walk *walk, Frame frame) {
    if (walk->depth == walk->capacity) {
        size_t capacity = walk->capacity ? walk->capacity * 2 : 64;
        Frame *grown = PyMem_Realloc(walk->frames, capacity * sizeof(Frame));
        if (grown == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        walk->frames = grown;
        walk->capacity = capacity;
    }
    walk->frames[walk->depth++] = frame;
    return 0;
}

/* An element's end: the abbreviation's expansion, or a block boundary. */
static int leave(Walk *walk, Frame *frame, Frame *parent) {
    if (!frame->clean)
        return 0;
    if (!frame->transparent) {
        parent->previous_is_shown_inline = 0;
        return end_block(walk);
    }
    int status = 0;
    if (frame->expansion != NULL) {
        Py_ssize_t length = 0;
        const char *utf8 = PyUnicode_AsUTF8AndSize(frame->expansion, &length);
        if (utf8 == NULL || write_text(walk, " (", 2) < 0 || write_text(walk, utf8, length) < 0
            || write_text(walk, ")", 1) < 0)
            status = -1;
    }
    if (frame->case_space_pending)
        walk->case_space_pending = 0; /* it had no text */
    parent->previous_is_shown_inline = frame->has_kept_child || frame->expansion != NULL;
    parent->previous_ends_lowercase = walk->written > frame->written_before && run_ends_lowercase(&walk->run);
    Py_CLEAR(frame->expansion);
    return status;
}

/* A node's start. Returns 1 when its children are to be walked (its frame is pushed), 0 when
 * not, -1 on error. */
static int enter(Walk *walk, lxb_dom_node_t *node) {
    Frame *parent = &walk->frames[walk->depth - 1];
    unsigned int type = node_type(node);
    if (type == TYPE_TEXT) {
        if (!parent->clean)
            return 0;
        const lexbor_str_t *data = text_data(node);
        if (keep_child(walk, parent) < 0 || (data->data != NULL && write_text(walk, data->data, data->length) < 0))
            return -1;
        parent->previous_is_shown_inline = 0;
        return 0;
    }
    if (type == TYPE_COMMENT)
        return 0;
    if (type != TYPE_ELEMENT) {
        /* A processing instruction stays in the tree, and separates blocks. */
        if (parent->clean) {
            parent->previous_is_shown_inline = 0;
            if (keep_child(walk, parent) < 0 || end_block(walk) < 0)
                return -1;
        }
        return 0;
    }
    uintptr_t tag_id = node_tag_id(node);
    int kind = tag_id < (uintptr_t)kinds_length ? kinds[tag_id] : KIND_BLOCK;
    if (collect_metadata(walk, lxb_dom_interface_element(node), kind) < 0)
        return -1;
    Frame frame = {.node = node};
    if (node == walk->body) {
        int is_hidden = hidden(walk, lxb_dom_interface_element(node), tag_id);
        if (is_hidden < 0)
            return -1;
        if (is_hidden) {
            /* Nothing of a hidden body is read, not even its metadata. */
            walk->body_hidden = 1;
            return 0;
        }
        frame.clean = 1;
    } else if (parent->clean && kind != KIND_DROP && kind != KIND_TITLE && kind != KIND_BASE && kind != KIND_META
               && kind != KIND_LINK) {
        /* Only an element that its tag keeps is asked whether it is hidden. */
        int is_hidden = hidden(walk, lxb_dom_interface_element(node), tag_id);
        if (is_hidden < 0)
            return -1;
        if (!is_hidden) {
            frame.clean = 1;
            frame.transparent = kind == KIND_INLINE || kind == KIND_ANCHOR || kind == KIND_ABBREVIATION;
            frame.link_space_pending = kind == KIND_ANCHOR && parent->previous_is_shown_inline;
            if (keep_child(walk, parent) < 0)
                return -1;
            /* Rule 4's case boundary (`Политика|Экономика`); a link has the link space. */
            frame.case_space_pending = kind != KIND_ANCHOR && frame.transparent && parent->previous_is_shown_inline
                                       && parent->previous_ends_lowercase;
            frame.written_before = walk->written;
            if (walk->features)
                frame.flags = element_flags(lxb_dom_interface_element(node), tag_id, kind, parent->flags);
            if (frame.case_space_pending)
                walk->case_space_pending = 1;
            if (!frame.transparent && end_block(walk) < 0)
                return -1;
            if (kind == KIND_ABBREVIATION) {
                frame.expansion = expansion(lxb_dom_interface_element(node));
                if (frame.expansion == NULL && PyErr_Occurred())
                    return -1;
            }
        }
    }
    if (node_first_child(node) != NULL) {
        if (push(walk, frame) < 0) {
            Py_XDECREF(frame.expansion);
            return -1;
        }
        return 1;
    }
    return leave(walk, &frame, parent);
}

static int walk_tree(Walk *walk, lxb_dom_node_t *root) {
    if (push(walk, (Frame){.node = root}) < 0)
        return -1;
    lxb_dom_node_t *node = node_first_child(root);
    for (;;) {
        if (node == NULL) {
            if (walk->depth == 1)
                return 0;
            Frame *frame = &walk->frames[--walk->depth];
            if (leave(walk, frame, &walk->frames[walk->depth - 1]) < 0)
                return -1;
            node = node_next(frame->node);
            continue;
        }
        int descend = enter(walk, node);
        if (descend < 0)
            return -1;
        node = descend ? node_first_child(node) : node_next(node);
    }
}

static PyObject *walk(PyObject *module, PyObject *args) {
    unsigned long long root, body;
    PyObject *user_hidden;
    int features = 0;
    if (!PyArg_ParseTuple(args, "KKO|p:walk", &root, &body, &user_hidden, &features))
        return NULL;
    if (features && !features_bound) {
        PyErr_SetString(PyExc_RuntimeError, "_lexbor_walk.bind_features() has not been called");
        return NULL;
    }
    if (!bound) {
        PyErr_SetString(PyExc_RuntimeError, "_lexbor_walk.bind() has not been called");
        return NULL;
    }
    if (user_hidden != Py_None && !PyAnySet_Check(user_hidden)) {
        PyErr_SetString(PyExc_TypeError, "user_hidden must be a set of mem_ids or None");
        return NULL;
    }
    Walk state = {0};
    state.body = (lxb_dom_node_t *)(uintptr_t)body;
    state.user_hidden = user_hidden;
    state.features = features;
    state.hrefs = PyList_New(0);
    state.events = PyList_New(0);
    PyObject *result = NULL;
    if (state.hrefs != NULL && state.events != NULL && walk_tree(&state, (lxb_dom_node_t *)(uintptr_t)root) == 0) {
        PyObject *text = NULL;
        if (state.body == NULL || state.body_hidden)
            text = Py_NewRef(Py_None);
        else
            text = decode((const unsigned char *)(state.out.data ? state.out.data : ""), state.out.length);
        PyObject *block_features = !features ? Py_NewRef(Py_None)
            : PyBytes_FromStringAndSize(state.block_features.data ? state.block_features.data : "",
                                        (Py_ssize_t)state.block_features.length);
        if (text != NULL && block_features != NULL)
            result = Py_BuildValue("(NOOON)", text, state.may_hold_entities ? Py_True : Py_False, state.hrefs,
                                   state.events, block_features);
        else {
            Py_XDECREF(text);
            Py_XDECREF(block_features);
        }
    }
    for (size_t i = 0; i < state.depth; i++)
        Py_XDECREF(state.frames[i].expansion);
    PyMem_Free(state.frames);
    PyMem_Free(state.run.data);
    PyMem_Free(state.out.data);
    PyMem_Free(state.block_features.data);
    Py_XDECREF(state.hrefs);
    Py_XDECREF(state.events);
    return result;
}

static void *symbol(void *library, const char *name) {
    void *address = dlsym(library, name);
    if (address == NULL)
        PyErr_Format(PyExc_ImportError, "selectolax's lexbor module does not export %s", name);
    return address;
}

static PyObject *bind(PyObject *module, PyObject *args) {
    const char *path;
    PyObject *kind_table, *callback;
    unsigned long long noscript;
    if (!PyArg_ParseTuple(args, "sSKO:bind", &path, &kind_table, &noscript, &callback))
        return NULL;
    void *library = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
    if (library == NULL)
        library = dlopen(path, RTLD_NOW);
    if (library == NULL)
        return PyErr_Format(PyExc_ImportError, "cannot open %s: %s", path, dlerror());
#define BIND(variable, function)                                 \
    if ((*(void **)&variable = symbol(library, #function)) == NULL) \
        return NULL;
    LEXBOR_FUNCTIONS(BIND)
#undef BIND
    Py_ssize_t length = PyBytes_GET_SIZE(kind_table);
    unsigned char *table = PyMem_Malloc(length ? length : 1);
    if (table == NULL)
        return PyErr_NoMemory();
    memcpy(table, PyBytes_AS_STRING(kind_table), length);
    for (Py_ssize_t i = 0; i < length; i++)
        if (table[i] >= KIND_COUNT) {
            PyMem_Free(table);
            return PyErr_Format(PyExc_ValueError, "kind %d of tag id %zd is unknown", table[i], i);
        }
    PyMem_Free(kinds);
    kinds = table;
    kinds_length = length;
    noscript_id = (uintptr_t)noscript;
    Py_XSETREF(is_hidden_callback, Py_NewRef(callback));
    bound = 1;
    Py_RETURN_NONE;
}

/* Keywords from a tuple of (lowercase ASCII bytes, flags) pairs. */
static int read_keywords(PyObject *pairs, Keyword *keywords, size_t *count) {
    if (!PyTuple_Check(pairs) || PyTuple_GET_SIZE(pairs) > MAX_KEYWORDS) {
        PyErr_Format(PyExc_ValueError, "keywords must be a tuple of at most %d (bytes, flags) pairs", MAX_KEYWORDS);
        return -1;
    }
    *count = 0;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(pairs); i++) {
        const char *text;
        Py_ssize_t length;
        unsigned int flags;
        if (!PyArg_ParseTuple(PyTuple_GET_ITEM(pairs, i), "y#I", &text, &length, &flags))
            return -1;
        if (length == 0 || length >= (Py_ssize_t)sizeof keywords[0].text) {
            PyErr_SetString(PyExc_ValueError, "a keyword is 1 to 31 bytes");
            return -1;
        }
        memcpy(keywords[*count].text, text, (size_t)length);
        keywords[*count].text[length] = '\0';
        keywords[*count].length = (size_t)length;
        keywords[*count].flags = flags;
        (*count)++;
    }
    return 0;
}

static PyObject *bind_features(PyObject *module, PyObject *args) {
    PyObject *table, *classes, *roles;
    unsigned int link, main, boilerplate;
    if (!PyArg_ParseTuple(args, "SOOIII:bind_features", &table, &classes, &roles, &link, &main, &boilerplate))
        return NULL;
    Py_ssize_t length = PyBytes_GET_SIZE(table) / (Py_ssize_t)sizeof(uint32_t);
    uint32_t *flags = PyMem_Malloc(length ? length * sizeof(uint32_t) : 1);
    if (flags == NULL)
        return PyErr_NoMemory();
    memcpy(flags, PyBytes_AS_STRING(table), length * sizeof(uint32_t));
    if (read_keywords(classes, class_keywords, &class_keyword_count) < 0
        || read_keywords(roles, role_keywords, &role_keyword_count) < 0) {
        PyMem_Free(flags);
        features_bound = 0;
        return NULL;
    }
    size_t filled[256] = {0};
    for (size_t k = 0; k < class_keyword_count; k++) {
        unsigned char c = (unsigned char)class_keywords[k].text[0];
        keywords_by_first_byte[c][filled[c]++] = (signed char)k;
        if (c >= 'a' && c <= 'z') {
            unsigned char upper = (unsigned char)(c - 'a' + 'A');
            keywords_by_first_byte[upper][filled[upper]++] = (signed char)k;
        }
    }
    for (size_t c = 0; c < 256; c++)
        keywords_by_first_byte[c][filled[c]] = -1;
    PyMem_Free(tag_flags);
    tag_flags = flags;
    tag_flags_length = length;
    link_flag = link;
    main_flags = main;
    boilerplate_flags = boilerplate;
    features_bound = 1;
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"bind", bind, METH_VARARGS,
     "bind(library_path, kinds, noscript_id, is_hidden)\n"
     "Looks up lexbor's functions in selectolax's module and sets the rules' tables."},
    {"bind_features", bind_features, METH_VARARGS,
     "bind_features(tag_flags, class_keywords, role_keywords, link_flag, main_flags, boilerplate_flags)\n"
     "Sets main content's features: flags by tag id (native uint32s), (bytes, flags) pairs for class and id\n"
     "substrings and for role and itemprop values, and the flags of links, of main content and of boilerplate."},
    {"walk", walk, METH_VARARGS,
     "walk(root_mem_id, body_mem_id, user_hidden, features=False) -> (text or None, may_hold_entities, hrefs, events,\n"
     "block_features or None)\n"
     "The cleaned text (blocks separated by NUL), whether it may hold entities to decode, the hrefs\n"
     "of a and area in document order, and the (kind, value) of the first title (its text), the first\n"
     "base with an href and the first canonical link (their hrefs), and every meta with content (its\n"
     "attributes); with features, each block's (flags, link bytes, bytes) as native uint32s."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_lexbor_walk", NULL, -1, methods};

PyMODINIT_FUNC PyInit__lexbor_walk(void) {
    fill_byte_class();
    PyObject *m = PyModule_Create(&module);
    if (m == NULL)
        return NULL;
    static const struct {
        const char *name;
        int value;
    } constants[] = {
        {"KIND_BLOCK", KIND_BLOCK}, {"KIND_DROP", KIND_DROP}, {"KIND_INLINE", KIND_INLINE},
        {"KIND_ANCHOR", KIND_ANCHOR}, {"KIND_ABBREVIATION", KIND_ABBREVIATION}, {"KIND_AREA", KIND_AREA},
        {"KIND_TITLE", KIND_TITLE}, {"KIND_BASE", KIND_BASE}, {"KIND_META", KIND_META}, {"KIND_LINK", KIND_LINK},
    };
    for (size_t i = 0; i < sizeof constants / sizeof constants[0]; i++)
        if (PyModule_AddIntConstant(m, constants[i].name, constants[i].value) < 0) {
            Py_DECREF(m);
            return NULL;
        }
    /* What the headers it was compiled against are: lexbor's version, and the selectolax release they
     * came from. */
    if (PyModule_AddObject(m, "LEXBOR_VERSION", Py_BuildValue("(iii)", LEXBOR_VERSION_MAJOR, LEXBOR_VERSION_MINOR,
                                                            LEXBOR_VERSION_PATCH)) < 0
        || PyModule_AddStringConstant(m, "SELECTOLAX_VERSION", WEBCORPUS_SELECTOLAX_VERSION) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
