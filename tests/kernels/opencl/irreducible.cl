// Loops with more than one entry (irreducible control flow), as gotos into loops write them.
// `collatz_steps`: two loops entering each other, entered at either by the start value.
// `scan_words`: a scanner over one row of bytes whose state loop is entered in the middle
// by the row's first byte, carrying a count and a sum into both entries; nested inside it, a
// second loop with two entries.
__kernel void collatz_steps(__global uint* out, uint limit) {
    uint x = get_global_id(0) + 1, steps = 0;
    if (x % 3 == 0) goto odd;
even:
    if (x == 1) goto done;
    if (x & 1) goto odd;
    x >>= 1;
    steps++;
    goto even;
odd:
    if (x == 1 || steps > limit) goto done;
    x = 3 * x + 1;
    steps++;
    goto even;
done:
    out[get_global_id(0)] = steps;
}

__kernel void scan_words(__global const uchar* text, int width, __global uint* words, __global uint* sums) {
    __global const uchar* row = text + get_global_id(0) * width;
    int i = 0;
    uint count = 0, sum = 0;
    if (row[0] == ' ') goto space;
word:
    sum += row[i];
    if (++i >= width) goto end;
    if (row[i] == ' ') {
        count++;
        goto space;
    }
    if (row[i] == '#') goto digits;
    goto word;
digits:
    sum += 3 * row[i];
    if (++i >= width) goto end;
    if (row[i] & 1) goto digits;
    goto word;
space:
    if (++i >= width) goto end;
    if (row[i] == ' ') goto space;
    goto word;
end:
    words[get_global_id(0)] = count;
    sums[get_global_id(0)] = sum;
}
