/**
 * client_golang's bounds of native histogram buckets for schemas 1 to 8 (`nativeHistogramBounds`: for schema s,
 * 2^s bounds ≈ 0.5·2^(j/2^s)), as data: 510 little-endian float64s, schema 1's first.
 *
 * The values come from a floating-point recurrence, not from exact rounding (√2/2 is 0.7071067811865475 there,
 * the nearest double is …476), so neither `Math.pow` nor exact arithmetic reproduces them, and a key search against
 * other bounds would put some observations in the neighbouring bucket. They were printed by
 * test/differential/client_golang (`native-bounds`, client_golang's own table read through linkname), and
 * test/metrics/native-histogram.test.ts checks every entry against it.
 */
const BOUNDS_BASE64 =
  'AAAAAAAA4D/MO39mnqDmPwAAAAAAAOA/FbcxCv4G4z/MO39mnqDmP6zTWpmf6Oo/AAAAAAAA4D97UX08uHLhPxW3MQr+BuM/Jyo21dq/5D/MO39m' +
  'nqDmP9ugKkLlrOg/rNNamZ/o6j+GpPvcGFjtPwAAAAAAAOA/D4n5bFi14D97UX08uHLhPzhidW56OOI/FbcxCv4G4z8iNBJMpt7jPycqNtXav+Q/' +
  'KVRI3Qer5T/MO39mnqDmP4YB63MUoec/26AqQuWs6D+P8KOCkcTpP6zTWpmf6Oo/mlKF3ZsZ7D+GpPvcGFjtP9iQpKKvpO4/AAAAAAAA4D90hRXT' +
  'sFngPw+J+WxYteA/UFsS0AET4T97UX08uHLhP6q5aDGH1OE/OGJ1bno44j/h3h/1nZ7iPxW3MQr+BuM/yqk6N6dx4z8iNBJMpt7jPy2JYWAITuQ/' +
  'Jyo21dq/5D+BT51WKzTlPylUSN0Hq+U/hFU6sH4k5j/MO39mnqDmP3Nf7Oh1H+c/hgHrcxSh5z8RzkyZiSXoP9ugKkLlrOg/5MXNsDc36T+P8KOC' +
  'kcTpP1slPrIDVeo/rNNamZ/o6j9FXvvydn/rP5pShd2bGew/ZpDv3CC37D+GpPvcGFjtP12bezOX/O0/2JCkoq+k7j8+RW5bdlDvPwAAAAAAAOA/' +
  'YYB3Ppos4D90hRXTsFngP8ibdRhFh+A/D4n5bFi14D+i0dMy7OPgP1BbEtABE+E/3y2prppC4T97UX08uHLhP3XLb+tbo+E/qrloMYfU4T/WjGKI' +
  'OwbiPzhidW56OOI/3XziZUVr4j/h3h/1nZ7iPwsD5KaF0uI/FbcxCv4G4z//FmSyCDzjP8qpOjenceM/9p/lNNun4z8iNBJMpt7jPyou9yEKFuQ/' +
  'LYlhYAhO5D/QPMG1oobkPycqNtXav+Q/pyyddrL55D+BT51WKzTlP9ontTZHb+U/KVRI3Qer5T9IIa0Vb+flP4RVOrB+JOY/JCJVgjhi5j/MO39m' +
  'nqDmPy4aZTyy3+Y/c1/s6HUf5z/IZ0JW61/nP4YB63MUoec/YU7PNvPi5z8RzkyZiSXoP+uSRJvZaOg/26AqQuWs6D82dxWZrvHoP+TFzbA3N+k/' +
  'T07en4J96T+P8KOCkcTpP2TlXXtmDOo/WyU+sgNV6j++/XlVa57qP6zTWpmf6Oo/+hVPuKIz6z9FXvvydn/rP9DBS5AezOs/mlKF3ZsZ7D9J0Vcu' +
  '8WfsP2aQ79wgt+w/eYkHSi0H7T+GpPvcGFjtP4Qy2wPmqe0/XZt7M5f87T/1P4vnLlDuP9iQpKKvpO4/Jlph7hv67j8+RW5bdlDvP9aQnoHBp+8/' +
  'AAAAAAAA4D81M/upPRbgP2GAdz6aLOA/hH9u6BVD4D90hRXTsFngP9323SlrcOA/yJt1GEWH4D+D88bKPp7gPw+J+WxYteA/9kdyK5LM4D+i0dMy' +
  '7OPgPxrT/q9m++A/UFsS0AET4T/LMWzAvSrhP98tqa6aQuE/UI6lyJha4T97UX08uHLhP+mNjDj5iuE/dctv61uj4T/TXASE4LvhP6q5aDGH1OE/' +
  'HNn8IlDt4T/WjGKIOwbiP5XcfZFJH+I/OGJ1bno44j8+prJPzlHiP9184mVFa+I/gGP14d+E4j/h3h/1nZ7iP4/Z2tB/uOI/CwPkpoXS4j9VLz6p' +
  'r+ziPxW3MQr+BuM/MdhM/HAh4z//FmSyCDzjP/Cfkl/FVuM/yqk6N6dx4z9k2AVtrozjP/af5TTbp+M/46gTwy3D4z8iNBJMpt7jPxuArARF+uM/' +
  'Ki73IQoW5D+WqFDZ9THkPy2JYWAITuQ/VwAd7UFq5D/QPMG1oobkP97T1/Aqo+Q/Jyo21dq/5D8N3f2ZstzkP6csnXay+eQ/QmbPotoW5T+BT51W' +
  'KzTlPw2SXcqkUeU/2ie1Nkdv5T/8x5fUEo3lPylUSN0Hq+U/tkZZiibJ5T9IIa0Vb+flPwjcdrnhBeY/hFU6sH4k5j8ew8w0RkPmPyQiVYI4YuY/' +
  'cqlM1FWB5j/MO39mnqDmP77aC3USwOY/LhplPLLf5j+ClFH5ff/mP3Nf7Oh1H+c/coGlSJo/5z/IZ0JW61/nPz5d3k9pgOc/hgHrcxSh5z8xwTAB' +
  '7cHnP2FOzzbz4uc/EBo+VCcE6D8RzkyZiSXoP6vHI0YaR+g/65JEm9lo6D+XZorZx4roP9ugKkLlrOg/i0S1FjLP6D82dxWZrvHoP8X/kQtbFOk/' +
  '5MXNsDc36T8NUsjLRFrpP09O3p+Cfek/uAfKcPGg6T+P8KOCkcTpPyEj4xlj6Ok/ZOVde2YM6j8yLUrsmzDqP1slPrIDVeo/VrMwE5556j++/XlV' +
  'a57qP3jz079rw+o/rNNamZ/o6j9jto0pBw7rP/oVT7iiM+s/OFnljXJZ6z9FXvvydn/rP0cGoTCwpes/0MFLkB7M6z8GHtdbwvLrP5pShd2bGew/' +
  'eND/X6tA7D9J0Vcu8WfsP7LnBpRtj+w/ZpDv3CC37D/2w11VC9/sP3mJB0otB+0/7okNCIcv7T+GpPvcGFjtP5aDyRbjgO0/hDLbA+ap7T9etAHz' +
  'IdPtP12bezOX/O0/JqH1FEYm7j/1P4vnLlDuP4FMx/tReu4/2JCkoq+k7j/uZ44tSM/uPyZaYe4b+u4/lbprNysl7z8+RW5bdlDvPxC+nK39e+8/' +
  '1pCegcGn7z/ucY8rwtPvPwAAAAAAAOA/v7xa+hoL4D81M/upPRbgP4ECOxRoIeA/YYB3Ppos4D/MuxEu1DfgP4R/bugVQ+A/sVT2cl9O4D90hRXT' +
  'sFngP4kfPA4KZeA/3fbdKWtw4D82qHIr1HvgP8ibdRhFh+A/4Adm9r2S4D+D88bKPp7gPxk5H5vHqeA/D4n5bFi14D+FbORF8cDgP/ZHciuSzOA/' +
  '6l05IzvY4D+i0dMy7OPgP8Wp31+l7+A/GtP+r2b74D89I9coMAfhP1BbEtABE+E/tSpeq9se4T/LMWzAvSrhP6oE8hSoNuE/3y2prppC4T8tMU+T' +
  'lU7hP1COpciYWuE/wcNxVKRm4T97UX08uHLhP8C7lYbUfuE/6Y2MOPmK4T8vXTdYJpfhP3XLb+tbo+E/HIoT+Jmv4T/TXASE4LvhP2scKJUvyOE/' +
  'qrloMYfU4T8mQLRe5+DhPxzZ/CJQ7eE/TM44hMH54T/WjGKIOwbiPxmoeDW+EuI/ldx9kUkf4j/QEnmi3SviPzhidW56OOI/ChSC+x9F4j8+prJP' +
  'zlHiP3TOHnGFXuI/3XziZUVr4j8q3x00DnjiP4Bj9eHfhOI/b7uRdbqR4j/h3h/1nZ7iPxMP0WaKq+I/j9na0H+44j8uG3c5fsXiPwsD5KaF0uI/' +
  'iRVkH5bf4j9VLz6pr+ziP2qIvUrS+eI/FbcxCv4G4z/9su7tMhTjPzHYTPxwIeM/MuqoO7gu4z//FmSyCDzjPy3642ZiSeM/8J+SX8VW4z86iN6i' +
  'MWTjP8qpOjenceM/SXUeIyZ/4z9k2AVtrozjP+1AcRtAmuM/9p/lNNun4z/0bOy/f7XjP+OoE8Mtw+M/cuHtROXQ4z8iNBJMpt7jP3VRHN9w7OM/' +
  'G4CsBEX64z8koGfDIgjkPyou9yEKFuQ/ikYJJ/sj5D+WqFDZ9THkP9S5hD/6P+Q/LYlhYAhO5D8y0qdCIFzkP1cAHe1BauQ/NjKLZm145D/QPMG1' +
  'oobkP9KukuHhlOQ/3tPX8Cqj5D/Xt23qfbHkPycqNtXav+Q/FMEXuEHO5D8N3f2ZstzkP/6r2IEt6+Q/pyyddrL55D/vMUV/QQjlP0Jmz6LaFuU/' +
  '704/6H0l5T+BT51WKzTlPyet9vTiQuU/DZJdyqRR5T/QEOndcGDlP9ontTZHb+U/z8Ti2yd+5T/8x5fUEo3lP8sH/ycInOU/KVRI3Qer5T8Ceqj7' +
  'EbrlP7ZGWYomyeU/kouZkEXY5T9IIa0Vb+flP3Hr3CCj9uU/CNx2ueEF5j/09s3mKhXmP4RVOrB+JOY//SkZHd0z5j8ew8w0RkPmP7WPvP65UuY/' +
  'JCJVgjhi5j/1MwjHwXHmP3KpTNRVgeY/N5WesfSQ5j/MO39mnqDmPz4XdfpSsOY/vtoLdRLA5j9FdtTd3M/mPy4aZTyy3+Y/5DpZmJLv5j+ClFH5' +
  'ff/mP4Uu9GZ0D+c/c1/s6HUf5z+J0OqGgi/nP3KBpUiaP+c//MvXNb1P5z/IZ0JW61/nPwluq7EkcOc/Pl3eT2mA5z/1HKw4uZDnP4YB63MUoec/' +
  '2s92CXux5z8xwTAB7cHnP++G/2Jq0uc/YU7PNvPi5z+QxJGEh/PnPxAaPlQnBOg/2AbRrdIU6D8RzkyZiSXoP/ZBuR5MNug/q8cjRhpH6D8fW58X' +
  '9FfoP+uSRJvZaOg/NaQx2cp56D+XZorZx4roPw1YeKTQm+g/26AqQuWs6D94F9a6Bb7oP4tEtRYyz+g/2GYIXmrg6D82dxWZrvHoP4osKND+Auk/' +
  'xf+RC1sU6T/iL6pTwyXpP+TFzbA3N+k/5JhfK7hI6T8NUsjLRFrpP7Fwdprda+k/T07en4J96T+iInrkM4/pP7gHynDxoOk/C/5TTbuy6T+P8KOC' +
  'kcTpP9S4Sxl01uk/ISPjGWPo6T+c8geNXvrpP2TlXXtmDOo/u7iO7Xoe6j8yLUrsmzDqP9cKRoDJQuo/WyU+sgNV6j9RYPSKSmfqP1azMBOeeeo/' +
  'Vy7BU/6L6j++/XlVa57qP7luNSHlsOo/ePPTv2vD6j9zJzw6/9XqP6zTWpmf6Oo//vIi5kz76j9jto0pBw7rP1CJmmzOIOs/+hVPuKIz6z+wSbcV' +
  'hEbrPzhZ5Y1yWes/KcXxKW5s6z9FXvvydn/rP+JJJ/KMkus/RwahMLCl6z8db5q34LjrP9DBS5AezOs/BaLzw2nf6z8GHtdbwvLrPzuzQWEoBuw/' +
  'mlKF3ZsZ7D8qZfrZHC3sP3jQ/1+rQOw/IPv6eEdU7D9J0Vcu8WfsPzHJiImoe+w/sucGlG2P7D/YxFFXQKPsP2aQ79wgt+w/chZtLg/L7D/2w11V' +
  'C9/sP3CrW1sV8+w/eYkHSi0H7T9myQgrUxvtP+6JDQiHL+0/06HK6shD7T+GpPvcGFjtP9LmYuh2bO0/loPJFuOA7T90YP9xXZXtP4Qy2wPmqe0/' +
  'E4M61ny+7T9etAHzIdPtP1YGHGTV5+0/XZt7M5f87T8WfRlrZxHuPyah9RRGJu4/D+4WOzM77j/1P4vnLlDuP3VtZyQ5Ze4/gUzH+1F67j8+t813' +
  'eY/uP9iQpKKvpO4/bcp8hvS57j/uZ44tSM/uPw6FGKKq5O4/Jlph7hv67j8pQbYcnA/vP5W6azcrJe8/cnLdSMk67z8+RW5bdlDvP/ZEiHkyZu8/' +
  'EL6crf177z+GPCQC2JHvP9aQnoHBp+8/EtWSNrq97z/ucY8rwtPvP9YjKmvZ6e8/';

/** The bounds of each schema 1..8, decoded once on first use. */
let table: Float64Array[] | undefined;

export function nativeBoundsTable(): Float64Array[] {
  if (!table) {
    const bytes = Buffer.from(BOUNDS_BASE64, 'base64');
    const all = new Float64Array(bytes.length / 8);
    for (let i = 0; i < all.length; i++) all[i] = bytes.readDoubleLE(i * 8);
    table = [new Float64Array(0)];
    let at = 0;
    for (let s = 1; s <= 8; s++) {
      table.push(all.subarray(at, at + 2 ** s));
      at += 2 ** s;
    }
  }
  return table;
}
