/**
 * controller-runtime's `--zap-*` logging flags on a command (`demo`), validated as they are parsed: a bad value is a
 * usage error naming what the flag takes.
 */
import { Option, type Command } from 'commander';
import { ZAP_FLAGS, setZapFlag, type LogOptions } from 'ctrlmetrics/log';
import { UsageError } from './errors.js';

/** The options as commander stores them: one LogOptions object filled by every `--zap-*` flag given. */
export interface ZapCliOptions {
  zap?: LogOptions;
}

/** Adds the five flags; their values accumulate into `zap`. */
export function addZapOptions(cmd: Command): Command {
  for (const [name, flag] of Object.entries(ZAP_FLAGS)) {
    const option = new Option(flag.boolean ? `--${name} [bool]` : `--${name} <value>`, flag.help).argParser(
      (value: string | undefined, previous: unknown) => {
        const o: LogOptions = { ...(previous as LogOptions | undefined) };
        try {
          setZapFlag(o, name, value);
        } catch (err) {
          throw new UsageError(`--${name}: ${(err as Error).message}`, { cause: err });
        }
        return o;
      },
    );
    // a boolean given alone goes through the parser too (commander would otherwise store `true` over the object)
    if (flag.boolean) option.preset('true');
    option.attributeName = () => 'zap';
    cmd.addOption(option);
  }
  return cmd;
}
