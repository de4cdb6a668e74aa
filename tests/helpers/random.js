// Seeded random data, so that every failure can be replayed from its seed:
// the tutorial's generator (one implementation for the page and the tests).
export { gaussian, normalArray, prng, uniformArray } from '../../web/lib/random.js';
