// Package embedder is weft's offline text embedder: the model used when a step names none and no
// Voyage key or WEFT_EMBEDDING_MODEL is configured. It needs no key and no network: 100-dimensional
// GloVe word vectors (the 100,000 most frequent words, int8-quantized, embedded in the binary; see
// gen/ and PROVENANCE.md for where they come from and how to rebuild the asset) combined with SIF
// weighting (frequent words count less), removal of the common direction, and hashed character
// trigrams for words outside the vocabulary.
//
// It is honest about what it is: a bag-of-words model named "local-glove-sif-100d" (Model), far
// weaker than a trained sentence encoder, good enough for offline demos, tests and small corpora.
//
// Entry points: Load (the shared, concurrency-safe Embedder, decoded on first use), Embed, Cosine
// and Tokens.
//
// Like every provider client under activities/, it must not import Temporal (go.temporal.io),
// workflows/ or the activity adapter: the activities package calls it, never the other way.
package embedder
