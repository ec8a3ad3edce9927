import v8 from 'node:v8';

// V8's own word on an object's properties, compiled while the flag is on (it only reads).
v8.setFlagsFromString('--allow-natives-syntax');
/** Whether V8 holds `o`'s properties in fast mode (not a dictionary): `%HasFastProperties`. */
export const hasFastProperties = new Function('o', 'return %HasFastProperties(o)') as (o: object) => boolean;
v8.setFlagsFromString('--no-allow-natives-syntax');
