/**
 * A full-screen view on a terminal, as `top` and `watch` draw one: the alternate screen (the shell's screen comes
 * back on exit), a body redrawn in place, and exactly one status line on the last row with a spinner. Every line is
 * cut to the terminal's width, so nothing wraps and nothing scrolls, whatever the status says.
 */
import { fit } from '../ops/scrape-watch.js';

const SPINNER = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
const ESC = '\x1b[';

export class TerminalScreen {
  private statusText: () => string = () => '';
  private spinner: NodeJS.Timeout | undefined;
  private frame = 0;
  private resize: (() => void) | undefined;

  constructor(private readonly out: NodeJS.WriteStream) {}

  /** Columns of the terminal (80 when it does not say). */
  get columns(): number {
    return Math.max(20, this.out.columns || 80);
  }

  /** Rows of the terminal (24 when it does not say), the status line included. */
  get rows(): number {
    return Math.max(3, this.out.rows || 24);
  }

  /** Switches to the alternate screen, hides the cursor and starts the spinner. */
  enter(): void {
    this.out.write(`${ESC}?1049h${ESC}?25l${ESC}H${ESC}2J`);
    this.spinner = setInterval(() => this.renderStatus(), 100);
    this.spinner.unref();
  }

  /** Calls `fn` when the terminal is resized (redraw then). */
  onResize(fn: () => void): void {
    this.resize = () => {
      this.out.write(`${ESC}H${ESC}2J`);
      fn();
    };
    this.out.on('resize', this.resize);
  }

  /** Redraws the body (at most `rows - 1` lines) and the status line. */
  draw(lines: string[]): void {
    const body = lines.slice(0, this.rows - 1).map((l) => `${fit(l, this.columns)}${ESC}K`);
    this.out.write(`${ESC}H${body.join('\r\n')}${body.length ? '\r\n' : ''}${ESC}J`);
    this.renderStatus();
  }

  /** Sets what the status line says (asked again at every spinner frame, so it may count down). */
  status(text: () => string): void {
    this.statusText = text;
    this.renderStatus();
  }

  private renderStatus(): void {
    const text = `${SPINNER[this.frame++ % SPINNER.length]} ${this.statusText()}`;
    // one column short of the edge: writing the last cell of the last row scrolls some terminals
    this.out.write(`${ESC}${this.rows};1H${fit(text, this.columns - 1)}${ESC}K`);
  }

  /** Back to the shell's screen with the cursor shown; `final` is printed there, to stay in the scrollback. */
  leave(final: string[]): void {
    clearInterval(this.spinner);
    if (this.resize) this.out.off('resize', this.resize);
    this.out.write(`${ESC}?1049l${ESC}?25h${final.length ? final.join('\n') + '\n' : ''}`);
  }
}
