"""Language-model side: vocabularies (toy, synthetic, real), the toy and the real model, masked sampling."""
