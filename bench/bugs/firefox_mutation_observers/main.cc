// An editor highlighting search results with DOM ranges, modelled on the
// Firefox change "Deletion of mutation observers from a list resulted in
// O(n^2) behavior and could lead to massive freezes. This is resolved by
// using a LinkedList instead" (Phabricator D157031): a node kept its
// mutation observers in an array (nsTArray), and removing one searched the
// array from the start.
//
// Every highlight is a range that observes the text's container node
// (nsINode::AddMutationObserver) so it can adjust when the text changes;
// every DOM mutation notifies all observers. Clearing the highlights
// destroys the ranges, each calling nsINode::RemoveMutationObserver.
//
// The bug: RemoveMutationObserver() is RemoveElement(): IndexOf() compares
// every observer from the front, O(observers) per removal. Many searches
// with 50 hits each (normal) do not notice; the same 100,000 highlights in
// searches of 1,000 hits (buggy) make clearing quadratic. gprof blames the
// comparator and IndexOf; the observer list's removal, which chose the
// array, is the root cause (the fix: an intrusive doubly linked list).
// C++17 templates, built at -O0 (a debug build).
extern "C" {
#include "../common/corpus.h"
}
#include <cstdlib>
#include <new>

template <class A, class B>
struct nsDefaultComparator {
    bool Equals(const A &a, const B &b) const { return a == b; }
};

// A minimal nsTArray: contiguous elements, IndexOf/RemoveElementAt.
template <class E>
class nsTArray {
public:
    nsTArray() = default;
    ~nsTArray() { free(mHdr); }
    nsTArray(const nsTArray &) = delete;
    nsTArray &operator=(const nsTArray &) = delete;
    size_t Length() const { return mLength; }
    E &ElementAt(size_t i) { return mHdr[i]; }
    void AppendElement(const E &e)
    {
        if (mLength == mCapacity) {
            mCapacity = mCapacity ? mCapacity * 2 : 8;
            E *n = static_cast<E *>(realloc(mHdr, mCapacity * sizeof(E)));
            if (!n) throw std::bad_alloc();
            mHdr = n;
        }
        mHdr[mLength++] = e;
    }
    template <class Item, class Comparator = nsDefaultComparator<E, Item>>
    size_t IndexOf(const Item &item, const Comparator &comp = Comparator()) const
    {
        for (size_t i = 0; i < mLength; i++)
            if (comp.Equals(mHdr[i], item))
                return i;
        return NoIndex;
    }
    void RemoveElementAt(size_t i)
    {
        for (size_t k = i + 1; k < mLength; k++)
            mHdr[k - 1] = mHdr[k];
        mLength--;
    }
    template <class Item>
    bool RemoveElement(const Item &item)
    {
        size_t i = IndexOf(item);
        if (i == NoIndex)
            return false;
        RemoveElementAt(i);
        return true;
    }
    static constexpr size_t NoIndex = (size_t)-1;

private:
    E *mHdr = nullptr;
    size_t mLength = 0, mCapacity = 0;
};

class nsIMutationObserver {
public:
    virtual ~nsIMutationObserver() = default;
    virtual void CharacterDataChanged(uint32_t offset, int32_t delta) = 0;
#ifdef VPROF_CASE_FIX
    nsIMutationObserver *mPrev = nullptr, *mNext = nullptr;   // DoublyLinkedListElement
#endif
};

class nsINode {
public:
    void AddMutationObserver(nsIMutationObserver *obs)
    {
#ifdef VPROF_CASE_FIX
        obs->mPrev = mLast;
        obs->mNext = nullptr;
        if (mLast) mLast->mNext = obs; else mFirst = obs;
        mLast = obs;
#else
        mMutationObservers.AppendElement(obs);
#endif
    }
    void RemoveMutationObserver(nsIMutationObserver *obs);
    void NotifyCharacterDataChanged(uint32_t offset, int32_t delta)
    {
#ifdef VPROF_CASE_FIX
        for (nsIMutationObserver *o = mFirst; o; o = o->mNext)
            o->CharacterDataChanged(offset, delta);
#else
        for (size_t i = 0; i < mMutationObservers.Length(); i++)
            mMutationObservers.ElementAt(i)->CharacterDataChanged(offset, delta);
#endif
    }

private:
    nsTArray<nsIMutationObserver *> mMutationObservers;
#ifdef VPROF_CASE_FIX
    nsIMutationObserver *mFirst = nullptr, *mLast = nullptr;
#endif
};

void nsINode::RemoveMutationObserver(nsIMutationObserver *obs)
{
#ifdef VPROF_CASE_FIX
    if (obs->mPrev) obs->mPrev->mNext = obs->mNext; else mFirst = obs->mNext;
    if (obs->mNext) obs->mNext->mPrev = obs->mPrev; else mLast = obs->mPrev;
    obs->mPrev = obs->mNext = nullptr;
#else
    mMutationObservers.RemoveElement(obs); /* FIX: keep observers in a doubly linked list: O(1) removal */
#endif
}

// A highlight: a range over the text that follows its edits.
class nsRange final : public nsIMutationObserver {
public:
    nsRange(nsINode *root, uint32_t start, uint32_t end) : mRoot(root), mStart(start), mEnd(end)
    {
        mRoot->AddMutationObserver(this);
    }
    ~nsRange() override { mRoot->RemoveMutationObserver(this); }
    void CharacterDataChanged(uint32_t offset, int32_t delta) override
    {
        if (offset < mStart) { mStart = (uint32_t)((int32_t)mStart + delta); mEnd = (uint32_t)((int32_t)mEnd + delta); }
        else if (offset < mEnd) mEnd = (uint32_t)((int32_t)mEnd + delta);
    }
    uint64_t Hash() const { return (uint64_t)mStart * 1000003u + mEnd; }

private:
    nsINode *mRoot;
    uint32_t mStart, mEnd;
};

// One find-in-page: highlight every hit, type a little, clear the highlights.
static uint64_t FindAndHighlight(nsINode *text, int hits, int edits, rng_t *r)
{
    nsRange **ranges = new nsRange *[(size_t)hits];
    for (int i = 0; i < hits; i++) {
        uint32_t at = (uint32_t)(i * 97 + rng_below(r, 50));
        ranges[i] = new nsRange(text, at, at + 6);
    }
    for (int e = 0; e < edits; e++)
        text->NotifyCharacterDataChanged((uint32_t)rng_below(r, (uint64_t)hits * 97), 1);
    uint64_t h = 0;
    // The highlights live in a hash set: they die in no particular order.
    for (int i = 0; i < hits; i++) {
        int k = (int)((uint64_t)i * 2654435761u % (uint64_t)hits);
        if (!ranges[k]) for (k = 0; !ranges[k]; k++) {}
        h = h * 31 + ranges[k]->Hash();
        delete ranges[k];
        ranges[k] = nullptr;
    }
    delete[] ranges;
    return h;
}

int main(int argc, char **argv)
{
    opt_t opts[] = {
        { "searches", "find-in-page searches",     2000, 1, 100000000, 0 },
        { "hits",     "highlights per search",       50, 1, 10000000, 0 },
        { "edits",    "text edits while highlighted", 60, 0, 1000000, 0 },
    };
    opts_parse(argc, argv, opts, NOPTS(opts));
    long searches = opt_get(opts, NOPTS(opts), "searches");
    int hits = (int)opt_get(opts, NOPTS(opts), "hits");
    int edits = (int)opt_get(opts, NOPTS(opts), "edits");
    nsINode text;
    rng_t r;
    rng_seed(&r, 157031);
    uint64_t h = 0;
    for (long s = 0; s < searches; s++)
        h += FindAndHighlight(&text, hits, edits, &r);
    printf("%ld searches x %d highlights: ranges %016llx\n", searches, hits, (unsigned long long)h);
    return 0;
}
