// A browser engine building the render tree of a page, modelled on Blink's
// "Avoid N^2 walk placing renderers when building the render tree"
// (Chromium bug 245478, Blink r154053; WebKit bug 119114).
//
// Attaching an element resolves its style, creates its renderer and
// inserts it into the parent renderer before the renderer of the next
// sibling that has one (NodeRenderingContext::nextRenderer), then attaches
// its children.
//
// The bug: ContainerNode::attachChildren() attaches children first to
// last, so when a child is placed none of its following siblings has a
// renderer yet and nextRenderer() walks all of them: O(children^2) per
// parent. A page of many short lists (normal) does not notice; the same
// number of elements in a few long lists (buggy: 6 lists of 1,000 items)
// makes the walk dominate. gprof blames nextRenderer and Node::renderer;
// the attach order in attachChildren, a function with no time of its own,
// is the root cause (Blink's fix attaches the children last to first).
// C++17.
extern "C" {
#include "../common/corpus.h"
}
#include <memory>
#include <string_view>
#include <vector>

// Renderers keep their children in a doubly linked list, as Blink's
// RenderObjectChildList does: inserting before a sibling is O(1).
class RenderObject {
public:
    explicit RenderObject(uint32_t style_hash) : m_style(style_hash) {}
    ~RenderObject()
    {
        for (RenderObject *c = m_first, *n; c; c = n) {
            n = c->m_next;
            delete c;
        }
    }
    RenderObject(const RenderObject &) = delete;
    RenderObject &operator=(const RenderObject &) = delete;
    void addChild(std::unique_ptr<RenderObject> owned, RenderObject *beforeChild)
    {
        RenderObject *child = owned.release();
        child->m_parent = this;
        child->m_next = beforeChild;
        child->m_prev = beforeChild ? beforeChild->m_prev : m_last;
        if (child->m_prev) child->m_prev->m_next = child; else m_first = child;
        if (beforeChild) beforeChild->m_prev = child; else m_last = child;
        m_count++;
    }
    uint64_t checksum(uint64_t h) const
    {
        h = h * 1099511628211ULL ^ m_style;
        for (const RenderObject *c = m_first; c; c = c->m_next)
            h = c->checksum(h);
        return h;
    }
    size_t childCount() const { return m_count; }

private:
    uint32_t m_style;
    RenderObject *m_parent = nullptr, *m_first = nullptr, *m_last = nullptr;
    RenderObject *m_prev = nullptr, *m_next = nullptr;
    size_t m_count = 0;
};

class ContainerNode;

class Node {
public:
    virtual ~Node() = default;
    Node *nextSibling() const { return m_next; }
    ContainerNode *parentNode() const { return m_parent; }
    RenderObject *renderer() const { return m_renderer; }
    void setRenderer(RenderObject *r) { m_renderer = r; }
    virtual void attach() = 0;

protected:
    friend class ContainerNode;
    Node *m_next = nullptr, *m_prev = nullptr;
    ContainerNode *m_parent = nullptr;
    RenderObject *m_renderer = nullptr;
};

class ContainerNode : public Node {
public:
    Node *firstChild() const { return m_first; }
    Node *lastChild() const { return m_last; }
    void appendChild(std::unique_ptr<Node> child);
    void attachChildren();

protected:
    Node *m_first = nullptr, *m_last = nullptr;
    std::vector<std::unique_ptr<Node>> m_owned;
};

void ContainerNode::appendChild(std::unique_ptr<Node> child)
{
    Node *c = child.get();
    c->m_parent = this;
    c->m_prev = m_last;
    if (m_last) m_last->m_next = c; else m_first = c;
    m_last = c;
    m_owned.push_back(std::move(child));
}

void ContainerNode::attachChildren()
{
#ifdef VPROF_CASE_FIX
    for (Node *child = lastChild(); child; child = child->m_prev)
        child->attach();
#else
    for (Node *child = firstChild(); child; child = child->nextSibling()) /* FIX: attach last to first, so the next sibling's renderer exists */
        child->attach();
#endif
}

// Where a new renderer goes: before the next sibling that has one.
struct NodeRenderingContext {
    static RenderObject *nextRenderer(const Node *node)
    {
        for (Node *sibling = node->nextSibling(); sibling; sibling = sibling->nextSibling())
            if (RenderObject *r = sibling->renderer())
                return r;
        return nullptr;
    }
};

static RenderObject *g_root_renderer;

class Element : public ContainerNode {
public:
    Element(std::string_view tag, uint32_t cls) : m_tag(tag), m_class(cls) {}
    void attach() override;

private:
    uint32_t resolveStyle() const;
    void createRendererIfNeeded();
    std::string_view m_tag;
    uint32_t m_class;
};

uint32_t Element::resolveStyle() const
{
    // Selector matching: hash the tag and class through a few rules.
    uint32_t h = 2166136261u ^ m_class;
    for (int rule = 0; rule < 24; rule++)
        for (char c : m_tag)
            h = (h ^ (uint32_t)(c + rule)) * 16777619u;
    return h;
}

void Element::createRendererIfNeeded()
{
    auto renderer = std::make_unique<RenderObject>(resolveStyle());
    RenderObject *r = renderer.get();
    RenderObject *parent = parentNode() && parentNode()->renderer() ? parentNode()->renderer()
                                                                     : g_root_renderer;
    RenderObject *before = NodeRenderingContext::nextRenderer(this);
    parent->addChild(std::move(renderer), before);
    setRenderer(r);
}

void Element::attach()
{
    createRendererIfNeeded();
    attachChildren();
}

class Document : public ContainerNode {
public:
    void attach() override { attachChildren(); }
};

// <html><body><div id=page><div class=column>...<ul><li>..</li>...</ul>
static std::unique_ptr<Document> build_page(int lists, int items, rng_t *r)
{
    auto doc = std::make_unique<Document>();
    auto html = std::make_unique<Element>("html", 0);
    auto body = std::make_unique<Element>("body", 1);
    ContainerNode *parent = body.get();
    std::vector<std::unique_ptr<Element>> wrappers;
    for (int depth = 0; depth < 6; depth++) {        // nested layout divs
        auto div = std::make_unique<Element>("div", 10 + (uint32_t)depth);
        ContainerNode *next = div.get();
        parent->appendChild(std::move(div));
        parent = next;
    }
    for (int l = 0; l < lists; l++) {
        auto ul = std::make_unique<Element>("ul", 100 + (uint32_t)(l % 7));
        for (int i = 0; i < items; i++) {
            auto li = std::make_unique<Element>("li", 200 + (uint32_t)rng_below(r, 5));
            li->appendChild(std::make_unique<Element>("a", 300 + (uint32_t)rng_below(r, 3)));
            ul->appendChild(std::move(li));
        }
        parent->appendChild(std::move(ul));
    }
    html->appendChild(std::move(body));
    doc->appendChild(std::move(html));
    return doc;
}

int main(int argc, char **argv)
{
    opt_t opts[] = {
        { "lists", "lists on the page",            300, 1, 1000000, 0 },
        { "items", "items per list",                20, 1, 1000000, 0 },
        { "loads", "page loads",                    12, 1, 100000, 0 },
    };
    opts_parse(argc, argv, opts, NOPTS(opts));
    int lists = (int)opt_get(opts, NOPTS(opts), "lists");
    int items = (int)opt_get(opts, NOPTS(opts), "items");
    long loads = opt_get(opts, NOPTS(opts), "loads");
    uint64_t h = 0;
    size_t top = 0;
    for (long l = 0; l < loads; l++) {
        rng_t r;
        rng_seed(&r, 245478);
        auto doc = build_page(lists, items, &r);
        RenderObject root(0);
        g_root_renderer = &root;
        doc->attach();                                // the render tree
        h = h * 31 + root.checksum(0);
        top = root.childCount();
    }
    printf("%ld loads of %d x %d list items: render tree %016llx (%zu top renderers)\n",
           loads, lists, items, (unsigned long long)h, top);
    return 0;
}
